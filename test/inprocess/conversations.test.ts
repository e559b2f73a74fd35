/**
 * Scripting as with gh: --json FIELDS and --jq on every command with --json, router api, the usage
 * ledger and router usage, and conversations; in process against the emulator over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { seedScripting } from '../support/scripting-state.js';

let t: CliEnv;
beforeAll(async () => {
  t = await startCliEnv();
  await seedScripting(t);
});
afterAll(() => t.close());

const parse = (s: string) => JSON.parse(s) as unknown;

describe('conversations', () => {
  it('-c continues the last conversation across three turns; --conversation names one; list, show, delete', async () => {
    const env = { ROUTER_STATE_DIR: join(t.dir, 'conv-state') };
    t.clearRequests();
    await t.run(['chat', '--model', 'local/echo', 'first'], { env });
    await t.run(['chat', '-c', 'second'], { env });
    const third = await t.run(['chat', '--continue', 'third'], { env });
    expect(third.stdout).toBe('third\n');
    const sent = t.requests().filter((q) => q.path === '/v1/chat/completions').map((q) => q.body.messages.map((m: any) => m.content));
    expect(sent).toEqual([['first'], ['first', 'first', 'second'], ['first', 'first', 'second', 'second', 'third']]);
    expect(t.requests().at(-1)!.body.model).toBe('local/echo');
    await t.run(['chat', '--conversation', 'notes', '--model', 'local/echo', 'door code 4711'], { env });
    const list = parse((await t.run(['conversations', 'list', '--json'], { env })).stdout) as any[];
    expect(list.map((c) => [c.id, c.turns])).toEqual([['notes', 1], [expect.stringMatching(/^c_\d{8}_\w+$/), 3]]);
    const shown = await t.run(['conversations', 'show', 'notes'], { env });
    expect(shown.stdout).toBe('user: door code 4711\n\nassistant: door code 4711\n');
    expect((await t.run(['conversations', 'delete', 'notes'], { env })).code).toBe(0);
    expect((await t.run(['conversations', 'show', 'notes'], { env })).code).toBe(5);
    // As llm -c: with no conversation yet, -c starts one (issue 34).
    const none = await t.run(['chat', '-c', '--model', 'local/echo', 'x'], { env: { ROUTER_STATE_DIR: join(t.dir, 'empty-state') } });
    expect(none).toMatchObject({ code: 0, stdout: 'x\n' });
  });
});

describe('conversation ids', () => {
  it('an id that would be a hidden file (., .., .notes), never listed, is refused before anything is sent', async () => {
    const env = { ROUTER_STATE_DIR: join(t.dir, 'dot-state') };
    t.clearRequests();
    for (const id of ['.', '..', '.notes']) {
      const r = await t.run(['chat', '--conversation', id, '--model', 'local/echo', 'x'], { env });
      expect(r, id).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^error: conversation id ".*": use 1 to 64 letters, digits, "\.", "_" or "-", not starting with "\."\n$/);
    }
    expect(t.requests()).toHaveLength(0);
    expect((await t.run(['conversations', 'list', '--json'], { env })).stdout).toBe('[]\n');
  });
});

describe('conversations show of a tool run', () => {
  it('shows the calls the model made (not "null"), then the results and the answer', async () => {
    const env = { ROUTER_STATE_DIR: join(t.dir, 'tool-state') };
    const tools = join(t.dir, 'show-tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: 'echo sunny' }]));
    expect((await t.run(['chat', '--model', 'local/tools', '--tools', tools, '--conversation', 'trip', 'weather in Oslo'], { env })).code).toBe(0);
    const shown = await t.run(['conversations', 'show', 'trip'], { env });
    expect(shown.stdout).toBe('user: weather in Oslo\n\nassistant: [tool call] weather {"city":"weather in Oslo"}\n\ntool: sunny\n\nassistant: From the tool results: weather answered: sunny\n');
  });
});

describe('conversation files edited or damaged by hand', () => {
  it('list warns and goes on, show and -c say which file and how to remove it (nothing sent), delete removes it', async () => {
    const state = join(t.dir, 'torn-conversation-state');
    const env = { ROUTER_STATE_DIR: state };
    await t.run(['chat', '--conversation', 'good', '--model', 'local/echo', 'kept'], { env });
    await t.run(['chat', '--conversation', 'torn', '--model', 'local/echo', 'soon torn'], { env });
    writeFileSync(join(state, 'conversations', 'torn.json'), '{"id":"torn"}\n');
    const list = await t.run(['--verbose', 'conversations', 'list'], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^good\t/);
    expect(list.stderr).toBe(`warning: ${join(state, 'conversations', 'torn.json')} is damaged and left out (router conversations delete torn removes it)\n`);
    t.clearRequests();
    for (const args of [['conversations', 'show', 'torn'], ['chat', '-c', 'again']]) {
      const r = await t.run(args, { env });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toBe(`error: the conversation file ${join(state, 'conversations', 'torn.json')} is damaged (router conversations delete torn removes it)\n`);
    }
    expect(t.requests()).toHaveLength(0);
    expect((await t.run(['conversations', 'delete', 'torn'], { env })).code).toBe(0);
    expect((await t.run(['conversations', 'delete', 'torn'], { env })).code).toBe(5);
    expect((await t.run(['--verbose', 'conversations', 'list'], { env })).stderr).toBe('');
  });
});
