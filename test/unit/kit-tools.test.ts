import { describe, expect, it } from 'vitest';
import { functionTool, ResultBudget, runToolCall, splitCommandLine, ToolSet, toolEnv } from '../../src/kit/index.js';
import { mcpResult } from '../../src/kit/mcp-content.js';

describe('src/kit', () => {
  it('toolEnv drops the key variables and any variable holding a key in use', () => {
    const env = { PATH: '/bin', ROUTER_API_KEY: 'sk-one-1234567', ROUTER_MANAGEMENT_KEY: 'sk-two-1234567', COPY: 'Bearer sk-three-123456', ROUTER_MODEL: 'x/y' };
    expect(toolEnv(env, ['sk-three-123456'])).toEqual({ PATH: '/bin', ROUTER_MODEL: 'x/y' });
  });

  it('splitCommandLine splits as a shell does a simple command', () => {
    expect(splitCommandLine(`npx -y "@scope/server x" 'a b' c\\ d`)).toEqual(['npx', '-y', '@scope/server x', 'a b', 'c d']);
    expect(splitCommandLine('  ')).toEqual([]);
  });

  it('the bound of all results cuts the result that passes it, and all after it', () => {
    const budget = new ResultBudget(10);
    expect(budget.take('12345')).toEqual({ text: '12345', cut: false });
    const second = budget.take('6789012345');
    expect(second.cut).toBe(true);
    expect(second.text).toMatch(/^67890\n\[router: cut: the tool results of this chat reached/);
    expect(budget.take('x').text).toMatch(/^\n\[router: cut/);
  });

  it('a function in code is a tool; a ToolSet runs it by name; a failure is a result, not a throw', async () => {
    const add = functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, ({ a, b }) => ({ sum: Number(a) + Number(b) }));
    const boom = functionTool('boom', { type: 'object' }, () => {
      throw new Error('no');
    });
    const set = await ToolSet.open({ tools: [add, boom], declared: [{ name: 'caller_runs' }] });
    expect(set.chatTools().map((t) => (t.function as { name: string }).name)).toEqual(['add', 'boom', 'caller_runs']);
    expect(set.responsesTools()[0]).toMatchObject({ type: 'function', name: 'add' });
    const opts = { signal: new AbortController().signal, budget: new ResultBudget() };
    expect(await runToolCall(set.tools, { id: '1', name: 'add', arguments: '{"a":2,"b":3}' }, opts)).toMatchObject({ status: 'ok', text: '{"sum":5}' });
    expect(await runToolCall(set.tools, { id: '2', name: 'boom', arguments: '{}' }, opts)).toMatchObject({ status: 'failed', text: 'the tool failed: no' });
    expect(await runToolCall(set.tools, { id: '3', name: 'caller_runs', arguments: '{}' }, opts)).toMatchObject({ status: 'missing' });
  });

  it('a function that never looks at its signal is still bounded: by the call\'s timeout, and by the caller\'s abort', async () => {
    const tools = new Map([['stuck', functionTool('stuck', { type: 'object' }, () => new Promise(() => {}))]]);
    const call = { id: '1', name: 'stuck', arguments: '{}' };
    const timedOut = await runToolCall(tools, call, { signal: new AbortController().signal, budget: new ResultBudget(), timeoutMs: 20 });
    expect(timedOut.status).toBe('timeout');
    const stop = new AbortController();
    const reason = new Error('the user moved on');
    const running = runToolCall(tools, call, { signal: stop.signal, budget: new ResultBudget() });
    stop.abort(reason);
    await expect(running).rejects.toBe(reason);
  });

  it('MCP results: text as text, images passed on, resources by their text, errors marked', () => {
    const r = mcpResult({
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: 'iVBOR', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'A' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } },
      ],
    });
    expect(r.ok).toBe(true);
    expect(r.images).toEqual([{ mimeType: 'image/png', data: 'iVBOR' }]);
    expect(r.text.split('\n')).toEqual(['hello', '[image image/png]', '[resource file:///a.txt]', 'A', '[resource file:///b.bin (application/octet-stream): not shown to the model]']);
    expect(mcpResult({ content: [{ type: 'text', text: 'bad' }], isError: true }).ok).toBe(false);
    expect(mcpResult({ content: [], structuredContent: { a: 1 } }).text).toBe('{"a":1}');
  });
});
