import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { mounted } from '../support/full-disk.js';
import { runInProcess, testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';

// The CLI's edges closing note 8 left: each said or done as a user expects, with a test that fails on the old code.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

/** The environment of a user whose config folder cannot be made: ROUTER_CONFIG_DIR unset, under a HOME given. */
const homeAt = (home: string) => ({ ROUTER_CONFIG_DIR: '', HOME: home, XDG_CONFIG_HOME: '' });

it('a file where the config folder would go: config list and set say so in words, exit 2', async () => {
  // A file where the HOME's .config folder would go: a mistake to be told, not an empty list (a read-only HOME, below, reads as one).
  const home = join(t.dir, 'home-file-config');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, '.config'), 'not a folder');
  const env = homeAt(home);
  const path = join(home, '.config', 'router', 'config.json');
  expect(await run(['config', 'list'], env)).toMatchObject({ code: 2, stderr: `error: config file ${path}: cannot read it (a part of the path is not a folder)\n` });
  expect(await run(['config', 'path'], env)).toMatchObject({ code: 0, stdout: `${path}\n` });
  const set = await run(['config', 'set', 'model', 'local/echo'], env);
  expect(set.code).toBe(2);
  expect(set.stderr).toMatch(/^error: cannot create the config folder .*home-file-config\/\.config\/router: /);
});

it.skipIf(!mounted)('a read-only HOME: config list reads nothing, then the file it holds; set fails, saying why', async () => {
  const home = join(t.dir, 'read-only-home');
  mkdirSync(home, { recursive: true });
  expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,ro', 'tmpfs', home]).status).toBe(0);
  try {
    const env = homeAt(home);
    expect(await run(['config', 'list'], env)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await run(['config', 'set', 'model', 'local/echo'], env)).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: cannot create the config folder .*read-only-home\/\.config\/router: .*read-only/) });
    // A config file made while it was writable is read, not written.
    expect(spawnSync('mount', ['-o', 'remount,rw', home]).status).toBe(0);
    expect((await run(['config', 'set', 'model', 'local/echo'], env)).code).toBe(0);
    expect(spawnSync('mount', ['-o', 'remount,ro', home]).status).toBe(0);
    expect(await run(['config', 'list'], env)).toMatchObject({ code: 0, stdout: '*\tdefault\t\t\tlocal/echo\n' });
    expect(await run(['config', 'get', 'model'], env)).toMatchObject({ code: 0, stdout: 'local/echo\n' });
    expect(await run(['chat', '--max-tokens', '3', 'hi'], env)).toMatchObject({ code: 0, stdout: 'hi\n' });
    const set = await run(['config', 'set', 'model', 'local/lorem'], env);
    expect(set.code).not.toBe(0);
    expect(set.stderr).toMatch(/^error: .*config\.json.*read-only/);
  } finally {
    spawnSync('umount', [home]);
    rmSync(home, { recursive: true, force: true });
  }
});

it('budget and cap messages give amounts to their last digit: a spend over a budget never reads as equal to it', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'digits-state') };
  // local/lorem: 7 prompt tokens and 1 completion token cost $0.000005.
  const CALL = ['chat', '--model', 'local/lorem', '--max-tokens', '1', 'write 50 words about rivers'];
  expect((await run(CALL, env)).code).toBe(0);
  // Was "daily_budget of $0.000005 reached (…): $0.000005 spent today".
  const reached = await run(CALL, { ...env, ROUTER_DAILY_BUDGET: '0.0000049' });
  expect(reached.code).toBe(4);
  expect(reached.stderr).toMatch(/^error: daily_budget of \$0\.0000049 reached \(ROUTER_DAILY_BUDGET\): \$0\.000005 spent today \(UTC\);/);
  // Was "over --max-cost $0.000005".
  const capped = await run([...CALL, '--max-cost', '0.0000049'], env);
  expect(capped.code).toBe(4);
  expect(capped.stderr).toMatch(/^error: this call could cost up to \$\S+, over --max-cost \$0\.0000049: /);
  // What is left of a budget, to its last digit: $0.0000051 of $0.0000101 (was $0.000005).
  const left = await run(CALL, { ...env, ROUTER_DAILY_BUDGET: '0.0000101' });
  expect(left.code).toBe(4);
  expect(left.stderr).toMatch(/^error: this call could cost up to \$\S+, over what is left of daily_budget \(\$0\.0000051, ROUTER_DAILY_BUDGET\)/);
});

it('--dry-run under a budget already reached shows the body and says the budget would refuse the call; nothing is sent', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'dry-reached-state') };
  expect((await run(['chat', '--model', 'local/lorem', '--max-tokens', '1', 'write 50 words about rivers'], env)).code).toBe(0);
  const reached = { ...env, ROUTER_DAILY_BUDGET: '0.000001' };
  t.clearRequests();
  // Was exit 4 and no body: a dry run sends nothing, so it has nothing to refuse.
  const dry = await run(['chat', '--dry-run', '--model', 'local/echo', 'hi'], reached);
  expect(dry.code).toBe(0);
  expect(JSON.parse(dry.stdout)).toMatchObject({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const [note, bound] = dry.stderr.trim().split('\n');
  expect(note).toMatch(/^note: daily_budget of \$0\.000001 reached \(ROUTER_DAILY_BUDGET\): \$0\.000005 spent today \(UTC\); it resets at \S+ \(--ignore-budget for one call\); this call would be refused \(exit 4\) if it were sent$/);
  expect(bound).toMatch(/^cost bound: \$/);
  const requests = join(t.dir, 'dry-reached.jsonl');
  writeFileSync(requests, `${JSON.stringify({ custom_id: 'a', body: { model: 'local/echo', messages: [{ role: 'user', content: 'a' }], max_tokens: 5 } })}\n`);
  const batch = await run(['batch', 'create', requests, '--dry-run'], reached);
  expect(batch.code).toBe(0);
  expect(batch.stderr).toMatch(/^note: daily_budget of \$0\.000001 reached .*; this call would be refused \(exit 4\) if it were sent$/m);
  expect(t.requests().filter((q) => q.method === 'POST')).toEqual([]);
  // Sent for real, the call is refused as before.
  expect((await run(['chat', '--model', 'local/echo', 'hi'], reached)).code).toBe(4);
});

it('chat -i: a turn refused because the conversation so far makes its bound too high names /clear, and /clear lets the next through', async () => {
  const s = testStreams({ env: { ...t.env, ROUTER_STATE_DIR: join(t.dir, 'repl-bound-state'), ROUTER_DAILY_BUDGET: '0.004', NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
  const keys = new PassThrough();
  s.streams.stdin = keys;
  const session = main(['node', 'router', 'chat', '-i', '--model', 'local/echo'], s.streams);
  const prompts = () => (s.stderr().match(/> /g) ?? []).length;
  const say = async (text: string) => {
    const before = prompts();
    keys.write(`${text}\n`);
    expect(await until(() => prompts() > before)).toBe(true);
  };
  expect(await until(() => prompts() > 0)).toBe(true);
  // local/echo answers with the message: each turn sends about 1,200 bytes more than the one before.
  for (let turn = 0; turn < 8 && !/error:/.test(s.stderr()); turn++) await say(`${'x'.repeat(600)} ${turn}`);
  const lines = s.stderr().split('\n');
  const refused = lines.findIndex((l) => l.includes('error: this call could cost up to'));
  expect(refused).toBeGreaterThan(0);
  expect(lines[refused]).toMatch(/over what is left of daily_budget .*: not even one completion token fits/);
  // Was the error line alone.
  expect(lines[refused + 1]).toMatch(/^the \d+ earlier messages of this conversation go with every turn and count in its bound: \/clear starts afresh \(\/save FILE first keeps them\), \/model can take a cheaper model, or chat -i --ignore-budget leaves the budget out$/);
  await say('/clear');
  await say('hi');
  keys.write('/exit\n');
  expect(await session).toBe(0);
  expect(s.stdout()).toMatch(/hi\n$/);
  // Said once: after /clear the short turn fits and is answered.
  expect(s.stderr().match(/earlier messages of this conversation/g)).toHaveLength(1);
});

it('models and usage --by: a field not known is empty piped (as roles list has it), a dash on a terminal', async () => {
  const { startFixtureServer } = await import('../support/fixture-server.js');
  const bare = { id: 'acme/bare', name: 'Bare', created: 1, description: '', architecture: { modality: 'text->text', input_modalities: [], output_modalities: [], tokenizer: 'Other', instruct_type: null }, pricing: {}, top_provider: { is_moderated: false }, per_request_limits: null, supported_parameters: [], default_parameters: {}, canonical_slug: 'acme/bare', hugging_face_id: null };
  const server = await startFixtureServer({ 'GET /api/v1/models': { body: { data: [bare] } } });
  try {
    const env = { ROUTER_API_ROOT: server.apiRoot, XDG_CACHE_HOME: join(t.dir, 'bare-cache'), ROUTER_STATE_DIR: join(t.dir, 'bare-state') };
    // Was "acme/bare\tBare\t-\t-\t-\ttext->text": a script could not tell a dash from a value.
    expect(await run(['models', '--refresh'], env)).toMatchObject({ code: 0, stdout: 'acme/bare\tBare\t\t\t\ttext->text\n' });
    const tty = await runInProcess(['models'], { env: { ...t.env, ...env }, tty: { stdout: true } });
    expect(tty.stdout).toMatch(/^acme\/bare +Bare +- +- +- +text->text$/m);
  } finally {
    await server.close();
  }
  const state = join(t.dir, 'by-model-state');
  mkdirSync(state, { recursive: true });
  const time = new Date().toISOString();
  writeFileSync(join(state, 'usage.jsonl'), [{ time, profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model: 'local/echo', cost: 0.000002 }, { time, profile: 'default', command: 'api', endpoint: '/v1/chat/completions', cost: 0.000001 }].map((r) => `${JSON.stringify(r)}\n`).join(''));
  const env = { ROUTER_STATE_DIR: state };
  expect((await run(['usage', '--by', 'model'], env)).stdout).toBe('\t1\t0\t0\t0\t0.000001\nlocal/echo\t1\t0\t0\t0\t0.000002\ntotal\t2\t0\t0\t0\t0.000003\n');
  expect((await runInProcess(['usage', '--by', 'model'], { env: { ...t.env, ...env, NO_COLOR: '1' }, tty: { stdout: true } })).stdout).toMatch(/^- +1 +/m);
  expect(JSON.parse((await run(['usage', '--by', 'model', '--json'], env)).stdout).rows.map((r: { key: string | null }) => r.key)).toEqual([null, 'local/echo']);
});
