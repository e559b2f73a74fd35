import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';

// The edges of aliases, role parameters and model options: Tab, chat -i's /model and /role, an alias's options, an unlisted model.
let t: CliEnv;
beforeAll(async () => {
  t = await startCliEnv();
  mkdirSync(join(t.dir, 'config', 'roles'), { recursive: true });
  expect((await t.run(['aliases', 'set', 'fast', 'local/echo'])).code).toBe(0);
  expect((await t.run(['aliases', 'set', 'wordy', 'local/lorem'])).code).toBe(0);
});
afterAll(() => t.close());

const chats = () => t.requests().filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as { temperature?: number; seed?: number; messages: { role: string; content: string }[] });

/** chat -i ARGS with each line typed at its prompt; the requests it sent and what it said. */
async function session(args: string[], lines: string[]): Promise<{ sent: ReturnType<typeof chats>; stderr: string }> {
  const before = chats().length;
  const s = testStreams({ env: { ...t.env, NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
  const keys = new PassThrough();
  s.streams.stdin = keys;
  const run = main(['node', 'router', 'chat', '-i', ...args], s.streams);
  const read = () => s.stderr().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  const prompts = () => (read().match(/^> /gm) ?? []).length;
  for (const [i, line] of [...lines, '/exit'].entries()) {
    await until(() => prompts() > i);
    keys.write(`${line}\r`);
  }
  expect(await run, read()).toBe(0);
  return { sent: chats().slice(before), stderr: read() };
}

describe('Tab after --model', () => {
  it('offers the aliases with the model ids, the aliases read from their file with no service at hand', async () => {
    const offered = (await t.run(['__complete', 'models'])).stdout.split('\n');
    expect(offered).toEqual(expect.arrayContaining(['fast', 'wordy', 'local/echo']));
    const before = t.requests().length;
    const offline = await t.run(['__complete', 'models'], { env: { ROUTER_API_KEY: '', ROUTER_API_ROOT: 'http://127.0.0.1:9/api/v1', ROUTER_STATE_DIR: join(t.dir, 'no-state') } });
    expect(offline).toMatchObject({ code: 0, stdout: 'fast\nwordy\n', stderr: '' });
    expect(t.requests().length).toBe(before);
    // Where only a model id is taken (aliases set's model, --models), no alias is offered.
    expect((await t.run(['__complete', 'model-ids'])).stdout.split('\n')).not.toContain('fast');
    for (const shell of ['bash', 'zsh', 'fish']) expect((await t.run(['completion', shell])).stdout).toContain('router __complete models');
  });
});

describe('chat -i', () => {
  beforeAll(async () => {
    for (const [model, option, value] of [['local/echo', 'temperature', '0.5'], ['local/lorem', 'temperature', '0.9'], ['local/lorem', 'seed', '3']]) expect((await t.run(['models', 'options', 'set', model!, option!, value!])).code).toBe(0);
  });

  it("/model NAME takes that model's options in place of the last one's; a flag typed still goes over them", async () => {
    const { sent } = await session(['--model', 'local/echo'], ['one', '/model wordy', 'two', '/model fast', 'three']);
    expect(sent.map((b) => [b.temperature, b.seed])).toEqual([[0.5, undefined], [0.9, 3], [0.5, undefined]]);
    const typed = await session(['--model', 'local/echo', '--seed', '7'], ['one', '/model local/lorem', 'two']);
    expect(typed.sent.map((b) => [b.temperature, b.seed])).toEqual([[0.5, 7], [0.9, 7]]);
  });

  it("/role NAME fills its placeholders from --param and its defaults, takes its model's options; a missing one leaves the role", async () => {
    const roles = join(t.dir, 'config', 'roles');
    writeFileSync(join(roles, 'plain.md'), '---\nmodel: local/echo\n---\nBe plain.\n');
    writeFileSync(join(roles, 'tr.md'), '---\nmodel: wordy\ndefaults:\n  tone: short\n---\nAnswer in $lang, ${tone}; costs $$5.\n');
    writeFileSync(join(roles, 'needs.md'), '---\nmodel: local/echo\n---\nWrite to $who.\n');
    const { sent, stderr } = await session(['--role', 'plain', '--param', 'lang', 'French'], ['one', '/role tr', 'two', '/role needs', 'three']);
    expect(sent.map((b) => b.messages[0])).toEqual([{ role: 'system', content: 'Be plain.' }, ...Array(2).fill({ role: 'system', content: 'Answer in French, short; costs $5.' })]);
    expect(sent.map((b) => b.temperature)).toEqual([0.5, 0.9, 0.9]);
    expect(stderr).toContain('role tr (model local/lorem)\n');
    expect(stderr).toMatch(/\nerror: \/role: role needs: no value for \$who \(give it: \/role needs who=VALUE; \$\$ writes a literal \$\)\n/);
    expect(stderr).not.toContain('role needs (model');
  });
});

describe('models options of an alias', () => {
  it("are its model's: set, show and clear say so, and stay with the model when the alias moves", async () => {
    expect((await t.run(['models', 'options', 'set', 'fast', 'top-p', '0.7'])).code).toBe(0);
    expect(await t.run(['models', 'options', 'set', 'fast', 'top-p', '0.8'])).toMatchObject({ code: 0, stderr: 'note: top-p of local/echo (alias fast) was 0.7; now 0.8\n' });
    expect((await t.run(['models', 'options', 'show', 'fast'])).stdout).toContain('top-p\t0.8\n');
    expect((await t.run(['models', 'options', 'show', 'local/echo'])).stdout).toContain('top-p\t0.8\n');
    expect(await t.run(['models', 'options', 'clear', 'fast', 'top-k'])).toMatchObject({ code: 5, stderr: 'error: no option top-k kept for local/echo (alias fast)\n' });
    expect((await t.run(['aliases', 'set', 'fast', 'local/tts'])).code).toBe(0);
    expect((await t.run(['models', 'options', 'show', 'local/echo'])).stdout).toContain('top-p\t0.8\n');
    expect((await t.run(['models', 'options', 'show', 'fast'])).stdout).toBe('');
    expect((await t.run(['aliases', 'set', 'fast', 'local/echo'])).code).toBe(0);
    expect((await t.run(['models', 'options', 'clear', 'fast', 'top-p'])).code).toBe(0);
  });
});

describe('aliases set of a model the service does not list', () => {
  it('is a note from the kept list, set all the same; nothing sent, and nothing said without a kept list', async () => {
    expect((await t.run(['models'])).code).toBe(0);
    const before = t.requests().length;
    const r = await t.run(['aliases', 'set', 'typo', 'local/ecko']);
    expect(r).toMatchObject({ code: 0, stderr: `note: local/ecko is not in the model list of ${t.apiRoot} (did you mean local/echo?); set all the same\n` });
    expect((await t.run(['aliases', 'set', 'ok', 'local/echo'])).stderr).toBe('');
    const unkept = await t.run(['aliases', 'set', 'typo2', 'local/ecko'], { env: { ROUTER_STATE_DIR: join(t.dir, 'no-state') } });
    expect(unkept).toMatchObject({ code: 0, stderr: '' });
    expect(t.requests().length).toBe(before);
    expect((await t.run(['aliases', 'list'])).stdout).toContain('typo2\tlocal/ecko\n');
  });
});
