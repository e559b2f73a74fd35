import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';

// A flag that only means something with another one is refused alone (exit 2, nothing sent),
// in the same words on every command: "--X goes with --Y".
let t: InProcessEnv;
let input: string;
let tools: string;
beforeAll(async () => {
  t = await startInProcessEnv();
  input = join(t.dir, 'requests.jsonl');
  writeFileSync(input, JSON.stringify({ custom_id: 'r1', body: { messages: [{ role: 'user', content: 'q' }] } }) + '\n');
  tools = join(t.dir, 'tools.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } }, command: 'date' }]));
});
afterAll(() => t.close());

const batches = async () => (await t.call('GET', '/v1/batches?limit=100')).json.data.length as number;

describe('flags that go with another flag', () => {
  it.each([
    ['batch create --interval', () => ['batch', 'create', input, '--model', 'local/echo', '--interval', '2'], '--interval goes with --watch'],
    ['batch create --offline-timeout', () => ['batch', 'create', input, '--model', 'local/echo', '--offline-timeout', '60'], '--offline-timeout goes with --watch'],
    ['batch get --interval', () => ['batch', 'get', 'batch_x', '--interval', '2'], '--interval goes with --watch'],
    ['batch get --offline-timeout', () => ['batch', 'get', 'batch_x', '--offline-timeout', '60'], '--offline-timeout goes with --watch'],
    ['batch run --interval', () => ['batch', 'run', input, '--model', 'local/echo', '--interval', '5'], '--interval goes with --watch or --results'],
    ['batch run --line-numbers', () => ['batch', 'run', input, '--model', 'local/echo', '--line-numbers'], '--line-numbers goes with --results'],
    ['chat --approve', () => ['chat', '-m', 'local/echo', '--approve', 'hi'], '--approve goes with --tools or --mcp'],
    ['chat --max-tool-rounds', () => ['chat', '-m', 'local/echo', '--max-tool-rounds', '3', 'hi'], '--max-tool-rounds goes with --tools or --mcp'],
  ])('%s alone: exit 2, one line, nothing sent', async (_, argv, said) => {
    const before = await batches();
    const r = await t.run(argv());
    expect(r.stderr).toBe(`error: ${said}\n`);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(await batches()).toBe(before);
  });

  it('with the flag they go with, they are taken', async () => {
    const r = await t.run(['chat', '-m', 'local/echo', '--tools', tools, '--max-tool-rounds', '3', 'hi']);
    expect(r.stderr).not.toMatch(/goes with/);
    expect(r.code).toBe(0);
  });

  it('with --role, what they go with may come from the role; a role without it does not excuse them', async () => {
    expect(await t.run(['roles', 'save', 'plain', '--system', 'Be brief.', '--model', 'local/echo'])).toMatchObject({ stderr: '', code: 0 });
    expect(await t.run(['roles', 'save', 'clock', '--system', 'Tell the time.', '--model', 'local/echo', '--tools', tools])).toMatchObject({ stderr: '', code: 0 });
    const chats = () => t.emu.requestLog.filter((r) => r.path === '/v1/chat/completions').length;
    const before = chats();
    for (const flags of [['--max-tool-rounds', '3'], ['--approve']]) {
      const r = await t.run(['chat', '--role', 'plain', ...flags, 'hi']);
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: ${flags[0]} goes with --tools or --mcp\n` });
    }
    expect(chats()).toBe(before);
    const taken = await t.run(['chat', '--role', 'clock', '--max-tool-rounds', '3', 'hi']);
    expect(taken.stderr).not.toMatch(/goes with/);
  });
});
