import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureRuns, type Fixture } from '../support/fixture-server.js';
import { answerValidator, exampleAnswer, exampleOf, schemaValidator, violations } from '../conformance/openapi-fixtures.js';

// An answer of tool calls that router does not run (chat without --tools; function calls in a
// Responses result) is exit 11 with the calls on stdout, never exit 0 with nothing printed. The
// answers are the official OpenAPI's examples, patched to hold calls, served over HTTP.
const fixture = fixtureRuns();
const against = fixture.against;

const ARGS = '{"city":"Paris"}';
const CALL_LINE = `${JSON.stringify({ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } })}\n`;

function chatCalls(content: string | null = null) {
  const c = exampleAnswer('post', '/chat/completions');
  c.choices[0].message = { role: 'assistant', content, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: ARGS } }] };
  c.choices[0].finish_reason = 'tool_calls';
  return c;
}

function chatCallChunks() {
  const chunk = (choice: unknown, extra: Record<string, unknown> = {}) => ({ ...exampleOf('ChatStreamChunk'), choices: [choice], ...extra });
  const call = (fn: Record<string, string>, head: boolean) => ({ index: 0, ...(head ? { id: 'call_1', type: 'function' } : {}), function: fn });
  return [
    chunk({ index: 0, delta: { role: 'assistant', content: null, tool_calls: [call({ name: 'get_weather', arguments: '' }, true)] }, finish_reason: null }),
    chunk({ index: 0, delta: { tool_calls: [call({ arguments: '{"city":' }, false)] }, finish_reason: null }),
    chunk({ index: 0, delta: { tool_calls: [call({ arguments: '"Paris"}' }, false)] }, finish_reason: 'tool_calls' }),
  ];
}

function responsesCalls() {
  const r = exampleAnswer('post', '/responses');
  delete r.output_text;
  r.output = [{ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: ARGS, status: 'completed' }];
  return r;
}

const chatRoute = (f: Fixture) => ({ 'POST /api/v1/chat/completions': f });
const responsesRoute = (f: Fixture) => ({ 'POST /api/v1/responses': f });
const NOT_RUN_CHAT = 'error: the model asked for a tool call that was not run (no --tools was given)\n';
const NOT_RUN_RESPONSES = 'error: the model asked for a tool call that was not run (no --tools or --mcp was given)\n';

describe('the fixtures are answers the official schemas allow', () => {
  it('chat, its stream, responses', () => {
    expect(violations(answerValidator('post', '/chat/completions'), chatCalls())).toBe('');
    for (const c of chatCallChunks()) expect(violations(schemaValidator('ChatStreamChunk'), c)).toBe('');
    expect(violations(answerValidator('post', '/responses'), responsesCalls())).toBe('');
  });
});

describe('chat without --tools, answered with tool calls', () => {
  it('not streamed: the calls on stdout, one JSON line each; exit 11', async () => {
    expect(await against(chatRoute({ body: chatCalls() }), ['chat', '--no-stream', '--model', 'openai/gpt-4', 'weather in Paris'])).toEqual({ code: 11, stdout: CALL_LINE, stderr: NOT_RUN_CHAT });
  });

  it('streamed: the same', async () => {
    expect(await against(chatRoute({ events: chatCallChunks(), terminator: '[DONE]' }), ['chat', '--model', 'openai/gpt-4', 'weather in Paris'])).toEqual({ code: 11, stdout: CALL_LINE, stderr: NOT_RUN_CHAT });
  });

  it('text beside the calls: the text, then the calls', async () => {
    const r = await against(chatRoute({ body: chatCalls('Let me look.') }), ['chat', '--no-stream', '--model', 'openai/gpt-4', 'weather in Paris']);
    expect(r).toEqual({ code: 11, stdout: `Let me look.\n${CALL_LINE}`, stderr: NOT_RUN_CHAT });
  });

  it('--json prints the answer, which holds the calls; exit 11 still', async () => {
    const r = await against(chatRoute({ body: chatCalls() }), ['chat', '--json', '--model', 'openai/gpt-4', 'weather in Paris']);
    expect(r.code).toBe(11);
    expect(r.stderr).toBe(NOT_RUN_CHAT);
    expect(JSON.parse(r.stdout).choices[0].message.tool_calls[0].function).toEqual({ name: 'get_weather', arguments: ARGS });
    const streamed = await against(chatRoute({ events: chatCallChunks(), terminator: '[DONE]' }), ['chat', '--stream', '--json', '--model', 'openai/gpt-4', 'weather in Paris']);
    expect(streamed.code).toBe(11);
    expect(streamed.stdout.trim().split('\n')).toHaveLength(3);
  });

  it('--usage still says what the call cost (with --tools whose tool has no command too)', async () => {
    const r = await against(chatRoute({ body: chatCalls() }), ['chat', '--no-stream', '--usage', '--model', 'openai/gpt-4', 'weather in Paris']);
    expect(r.code).toBe(11);
    expect(r.stderr).toMatch(/^usage: .*\nerror: the model asked for a tool call that was not run/);
    const dir = mkdtempSync(join(tmpdir(), 'router-calls-'));
    try {
      const tools = join(dir, 'tools.json');
      writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]));
      const listed = await against(chatRoute({ body: chatCalls() }), ['chat', '--no-stream', '--usage', '--tools', tools, '--model', 'openai/gpt-4', 'weather in Paris']);
      expect(listed).toMatchObject({ code: 11, stdout: CALL_LINE });
      expect(listed.stderr).toMatch(/^usage: .*\nerror: the model asked for a tool call that was not run \(get_weather has no "command" in --tools\)\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('responses answered with function calls (router runs none)', () => {
  it('not streamed: the calls on stdout, exit 11; --json: the result, exit 11', async () => {
    expect(await against(responsesRoute({ body: responsesCalls() }), ['responses', '--no-stream', '--model', 'openai/gpt-4o', 'weather in Paris'])).toEqual({ code: 11, stdout: CALL_LINE, stderr: NOT_RUN_RESPONSES });
    const json = await against(responsesRoute({ body: responsesCalls() }), ['responses', '--json', '--model', 'openai/gpt-4o', 'weather in Paris']);
    expect(json.code).toBe(11);
    expect(JSON.parse(json.stdout).output[0]).toMatchObject({ type: 'function_call', call_id: 'call_1' });
  });

  it('streamed: the same, and no empty line before the calls', async () => {
    const events = [
      { type: 'response.output_item.added', output_index: 0, sequence_number: 1, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, sequence_number: 2, delta: ARGS },
      { type: 'response.completed', sequence_number: 3, response: responsesCalls() },
    ];
    for (const ev of events) expect(violations(schemaValidator('StreamEvents'), ev)).toBe('');
    expect(await against(responsesRoute({ events }), ['responses', '--model', 'openai/gpt-4o', 'weather in Paris'])).toEqual({ code: 11, stdout: CALL_LINE, stderr: NOT_RUN_RESPONSES });
  });
});
