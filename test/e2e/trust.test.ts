// What only a process shows: stdout on /dev/full or a closed pipe, HOME, a folder as stdin,
// serve on real addresses, a watch across a restart. The rest of these checks run in
// test/inprocess (output-paths, batch-ids, serve, usage-errors, onboarding, state-folders).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { runCliInProcess } from '../support/cli-env.js';
import { until } from '../support/until.js';

let t: TestEnv;
let requests: string;
let batchId: string;

beforeAll(async () => {
  t = await startTestEnv();
  requests = join(t.dir, 'requests.jsonl');
  writeFileSync(requests, ['a', 'b'].map((c) => JSON.stringify({ custom_id: c, body: { model: 'local/echo', messages: [{ role: 'user', content: c }] } })).join('\n'));
  // Setup, in this process: only the checks below need a process of their own.
  const inProcess = (args: string[]) => runCliInProcess(args, { env: t.env });
  batchId = (await inProcess(['batch', 'create', requests])).stdout.trim();
  expect((await inProcess(['batch', 'get', batchId, '--watch', '--interval', '0.05'])).code).toBe(0);
});
afterAll(() => t.close());

const mgmt = () => ({ ROUTER_MANAGEMENT_KEY: t.managementKey });

// Each case is one process on its own: they run side by side.
describe.concurrent('stdout on a full disk: one line on stderr, non-zero exit, for every command', () => {
  const cases: [string, () => string[]][] = [
    ['--help', () => ['--help']],
    ['--version', () => ['--version']],
    ['chat', () => ['chat', '--model', 'local/lorem', 'write 40 words']],
    ['chat --json', () => ['chat', '--json', '--model', 'local/echo', 'hi']],
    ['responses', () => ['responses', '--model', 'local/lorem', 'hi']],
    ['embed', () => ['embed', '--model', 'local/embed', 'a', 'b']],
    ['speak', () => ['speak', 'hello', '--voice', 'alloy', '--model', 'local/tts']],
    ['decide', () => ['decide', '--model', 'local/judge', '--state-text', 'x', '--noul', 'q', 'is it?']],
    ['batch create', () => ['batch', 'create', requests]],
    ['batch list', () => ['batch', 'list']],
    ['batch get', () => ['batch', 'get', batchId, '--json']],
    ['batch get --results', () => ['batch', 'get', batchId, '--results']],
    ['config path', () => ['config', 'path']],
    ['completion bash', () => ['completion', 'bash']],
    ['chat --help', () => ['chat', '--help']],
  ];
  for (const [name, args] of cases) {
    it(name, async () => {
      const r = await t.run(args(), { stdoutPath: '/dev/full', env: mgmt() });
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: .*disk full/)]);
    });
  }
});

describe('an id that stdout could not carry is never lost', () => {
  const latestBatch = async () => {
    const res = await fetch(`${t.apiRoot}/v1/batches?limit=1`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    return ((await res.json()) as { data: { id: string }[] }).data[0]!.id;
  };

  it('batch create to a full disk names the batch it made (plain, --json, --jq)', async () => {
    for (const extra of [[], ['--json'], ['--jq', '.id']]) {
      const r = await t.run(['batch', 'create', requests, ...extra], { stdoutPath: '/dev/full' });
      expect(r.code).toBe(1);
      const id = await latestBatch();
      expect(r.stderr).toBe(`error: cannot write stdout: disk full; batch ${id} was created (router batch get ${id})\n`);
    }
  });

  it('router api: what a POST made is named when its answer cannot be printed', async () => {
    const body = join(t.dir, 'api-batch.json');
    writeFileSync(body, JSON.stringify({ endpoint: '/v1/chat/completions', model: 'local/echo', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }] } }] }));
    for (const extra of [[], ['--jq', '.id'], ['-i']]) {
      const r = await t.run(['api', 'POST', '/v1/batches', '--input', body, ...extra], { stdoutPath: '/dev/full' });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`error: cannot write stdout: disk full; POST /v1/batches made batch ${await latestBatch()}\n`);
    }
  });

  it('batch create into a pipe closed early says the id on stderr, exit 0', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [BIN, 'batch', 'create', requests], { env: { ...process.env, ...t.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before the id is written
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on('close', resolve));
    const id = await latestBatch();
    expect(code).toBe(0);
    expect(stderr).toBe(`batch ${id} was created (router batch get ${id})\n`);
  });

  // Decided as batch create's: a closed pipe is the reader's choice (| head -c 0), and a reader that never reads
  // (| true) cannot be told apart (a write into the pipe's buffer succeeds); the key exists, stderr names its hash.
  it('keys create into a pipe closed early: the key made, its hash and the way to delete it on stderr, exit 0', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [BIN, 'keys', 'create', 'piped-away'], { env: { ...process.env, ...t.env, ...mgmt() }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before the key is written
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const hash = /^key "piped-away" was created \(hash ([0-9a-f]{64}); router keys delete \1 if its key was lost\)$/m.exec(stderr)?.[1];
    expect(hash, stderr).toBeDefined();
    expect(stderr).toMatch(/^warning: the key is shown this once, on stdout/m);
    expect(JSON.parse((await runCliInProcess(['keys', 'get', hash!, '--json'], { env: { ...t.env, ...mgmt() } })).stdout)).toMatchObject({ name: 'piped-away' });
  });

  it('batch run to a full disk names the job it started', async () => {
    const r = await t.run(['batch', 'run', requests, '--new'], { stdoutPath: '/dev/full' });
    expect(r.code).toBe(1);
    const id = /job (\S+) was started/.exec(r.stderr)?.[1];
    expect(id).toBeDefined();
    expect(r.stderr).toBe(`error: cannot write stdout: disk full; job ${id} was started (router batch job ${id}; router batch run --resume ${id} --watch)\n`);
    expect((await t.run(['batch', 'job', id!, '--json'])).code).toBe(0);
  });
});

describe('serve refuses what it cannot use, in words', () => {

  // One test a host: seven router processes in one test passed its 60 s guard at load 30 (0.6 s of CPU each).
  it.each([
    ['NaN', 'error: --host NaN: no such host name or address'],
    ['no-such-host.invalid', 'error: --host no-such-host.invalid: no such host name or address'],
    ['10.9.9.9', 'error: --host 10.9.9.9: not an address of this machine'],
    ['', 'error: --host: the address is empty (127.0.0.1 is the default)'],
    [' ', 'error: --host: the address is empty (127.0.0.1 is the default)'],
  ])('a host that is no address of this machine, or blank (%j), is one line and exit 2 (no warning first)', async (host, line) => {
    const state = join(t.dir, 'st-host');
    expect(await t.run(['serve', '--port', '0', '--host', host, '--state', state])).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
  });

  it('an IPv6 host gives a root that works', async () => {
    const state = join(t.dir, 'st-host');
    const serve = t.spawn(['serve', '--port', '0', '--host', '::1', '--state', state, '--json']);
    try {
      const info = JSON.parse(await new Promise<string>((r) => serve.stdout!.once('data', (c) => r(String(c)))));
      expect(info.api_root).toMatch(/^http:\/\/\[::1\]:\d+\/api$/);
      expect(await t.run(['chat', '--model', 'local/echo', 'over v6'], { env: { ROUTER_API_ROOT: info.api_root, ROUTER_API_KEY: info.api_key } })).toMatchObject({ code: 0, stdout: 'over v6\n' });
    } finally {
      serve.kill('SIGTERM');
    }
  });
});

describe('typos and unknown names', () => {

  it('a blank path (empty or spaces) is refused before any request; a blank ROUTER_CONFIG_DIR or ROUTER_STATE_DIR is unset', async () => {
    const cwd = join(t.dir, 'blank-cwd');
    const home = join(t.dir, 'blank-home');
    mkdirSync(cwd);
    const before = t.requests().length;
    const key = { ROUTER_MANAGEMENT_KEY: t.managementKey };
    const cases: [string[], string][] = [
      [['speak', 'hi', '--model', 'local/tts', '--voice', 'alloy', '-o', ' '], 'error: cannot write to an empty path: give a file name'],
      [['batch', 'create', '  ', '--model', 'local/echo'], 'error: the requests file name is empty'],
      [['batch', 'run', ' ', '--model', 'local/echo'], 'error: the requests file name is empty'],
      [['embed', '--model', 'local/embed', '--file', ' '], 'error: --file: the path is empty'],
      [['serve', '--port', '0', '--state', ' '], 'error: --state: the path is empty'],
    ];
    for (const [args, line] of cases) expect(await t.run(args, { cwd, env: key })).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
    expect(t.requests()).toHaveLength(before);

    const env = { HOME: home, XDG_CONFIG_HOME: '', XDG_STATE_HOME: '', ROUTER_NO_LOG: '' };
    for (const dir of ['', ' ']) {
      const path = await t.run(['config', 'path'], { cwd, env: { ...env, ROUTER_CONFIG_DIR: dir } });
      expect(path.stdout).toBe(`${join(home, '.config', 'router', 'config.json')}\n`);
      expect(await t.run(['chat', '--model', 'local/echo', 'hi'], { cwd, env: { ...env, ROUTER_STATE_DIR: dir } })).toMatchObject({ code: 0, stdout: 'hi\n' });
    }
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(join(home, '.local', 'state', 'router'))).toBe(true);
  });

});
describe('onboarding as written', () => {

  it('a folder as stdin is named as such, not taken for no input; nothing is sent', async () => {
    t.clearRequests();
    for (const args of [['chat', '--model', 'local/echo'], ['embed', '--model', 'local/embed'], ['speak', '--voice', 'alloy', '--model', 'local/tts'], ['batch', 'create', '-']]) {
      const r = await t.run(args, { stdinPath: t.dir, env: mgmt() });
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: cannot read stdin: it is a folder\n' });
    }
    expect(t.requests()).toHaveLength(0);
  });

});
describe('--watch and batch ids', () => {
  it('a watch rides out the emulator going down and coming back, then writes the results', async () => {
    const s = await startTestEnv({ batchDelayMs: 150 });
    try {
      const file = join(s.dir, 'r.jsonl');
      writeFileSync(file, Array.from({ length: 12 }, (_, i) => JSON.stringify({ custom_id: `k${i}`, body: { model: 'local/echo', messages: [{ role: 'user', content: `m${i}` }] } })).join('\n'));
      const out = join(s.dir, 'out.jsonl');
      // Held until the restart (whose engine takes the env's 150 ms again): the batch cannot end before the watch sees the
      // emulator down, however slow a loaded machine is to get there.
      await s.admin('batches', { delay_ms: 600_000 });
      const child = s.spawn(['batch', 'create', file, '--watch', '--interval', '0.1', '--results', out, '--max-retries', '0']);
      let stderr = '';
      child.stderr!.on('data', (c) => (stderr += c));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      // Down while it watches (the create answered, the batch polled): on a loaded machine that can take a while. Before:
      // 200 looks 50 ms apart, after which the emulator went down under a create not yet answered (--max-retries 0: exit 7).
      expect(await until(() => /created batch_/.test(stderr))).toBe(true);
      const id = /created (batch_\w+)/.exec(stderr)![1]!;
      expect(await until(() => s.requests().some((r) => r.method === 'GET' && r.path === `/v1/batches/${id}`))).toBe(true);
      // Up again once the watch has found it down (a poll failed, another is due), not after a time it may not poll in.
      const offline = new RegExp(`${id}: .*; polling again in \\d+s`);
      await s.restart({ down: () => until(() => offline.test(stderr) || child.exitCode !== null) });
      expect(stderr).toMatch(offline);
      expect(await exited).toBe(0);
      expect(stderr).toMatch(/created batch_\w+/);
      // Dozens of polls, a reconnect: no MaxListenersExceededWarning, no stack.
      expect(stderr).not.toMatch(/Warning|\n\s+at /);
      expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(12);
    } finally {
      await s.close();
    }
  });

  it('serve on an address other than loopback warns that it is no secure server', async () => {
    const child = t.spawn(['serve', '--port', '0', '--host', '0.0.0.0', '--state', join(t.dir, 'open-state')]);
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    await new Promise((r) => child.stdout!.once('data', r));
    child.kill('SIGTERM');
    await new Promise((r) => child.on('close', r));
    expect(stderr).toMatch(/warning: listening on 0\.0\.0\.0: the emulator is a test double, not a secure server/);
  });

});
