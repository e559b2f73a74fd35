import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { BIN } from '../helpers.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Session 52's review of the CLI side: what it found, each with the test that failed before the fix.
let t: CliEnv;
cliEnvPerFile((env) => (t = env));

it('router serve --jq with a filter that fails once it listens: exit 1, the emulator stopped and --state let go, no hang', async () => {
  // serve runs until SIGTERM: the test's own signal, with the worker's listeners set aside meanwhile.
  const others = process.listeners('SIGTERM');
  process.removeAllListeners('SIGTERM');
  const state = join(t.dir, 'serve-jq-fails');
  try {
    const s = testStreams({ env: t.env });
    let code: number | undefined;
    void main(['node', 'router', 'serve', '--port', '0', '--state', state, '--jq', '.pid + "x"'], s.streams).then((c) => (code = c));
    // Before, the error was said and the emulator went on listening until the process was killed.
    expect(await until(() => code !== undefined)).toBe(true);
    expect(code).toBe(1);
    expect(s.stdout()).toBe('');
    expect(s.stderr()).toMatch(/^error: --jq: number \(\d+\) and string \("x"\) cannot be added\n$/);
    expect(lstatSync(join(state, 'serve.lock'), { throwIfNoEntry: false })).toBeUndefined();
    // The same --state serves again at once.
    const again = testStreams({ env: t.env });
    let second: number | undefined;
    void main(['node', 'router', 'serve', '--port', '0', '--state', state, '--jq', '.api_root'], again.streams).then((c) => (second = c));
    expect(await until(() => again.stdout().includes('\n') || second !== undefined)).toBe(true);
    expect(again.stdout(), again.stderr()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\n$/);
    process.emit('SIGTERM');
    expect(await until(() => second !== undefined)).toBe(true);
    expect(second).toBe(0);
  } finally {
    // A serve still running (a failed check) is stopped too.
    if (process.listenerCount('SIGTERM')) process.emit('SIGTERM');
    for (const l of others) process.on('SIGTERM', l);
  }
});

it('the same from the built router: the process ends, where it listened on until killed', async () => {
  const child = spawn(process.execPath, [BIN, 'serve', '--json', '--jq', '.pid + "x"', '--port', '0', '--state', join(t.dir, 'serve-jq-fails-bin')], { env: { ...process.env, ...t.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  let code: number | null | undefined;
  child.on('exit', (c) => (code = c));
  try {
    expect(await until(() => code !== undefined), stderr).toBe(true);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: --jq: number \(\d+\) and string \("x"\) cannot be added\n$/);
  } finally {
    if (code === undefined) child.kill();
  }
});

it('a node without WebAssembly (--jitless) still runs what makes no request: the launcher compiles no parser', async () => {
  // Before, bin/router.cjs started WebAssembly.compile() unguarded: a ReferenceError and its stack, exit 1.
  const child = spawn(process.execPath, ['--jitless', BIN, 'chat', '--help'], { env: { ...process.env, ...t.env, ROUTER_TRACE_START: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  expect(code, stderr).toBe(0);
  expect(stdout).toMatch(/^Usage: router chat/);
  expect(stderr).toContain('router: started from the bundle');
  expect(stderr).not.toMatch(/ReferenceError|WebAssembly/);
});

it('--jq run value by value over a long stream (a filter with debug) keeps jq\'s stack: every chunk, past the ~300 runs one jq held', async () => {
  // A run over many values that writes to stderr is done again value by value (runJqEach): hundreds of runs in one worker.
  const r = await t.run(['chat', '--model', 'local/lorem', '--stream', '--json', '--jq', '.choices[0].delta.content // empty | debug', 'write 400 words']);
  expect(r.code).toBe(0);
  // jq's debug lines, as jq's own CLI writes them: one per chunk with content.
  const debug = r.stderr.trim().split('\n');
  expect(debug.length).toBeGreaterThan(300);
  for (const line of debug) expect(line).toMatch(/^\["DEBUG:",".*"\]$/);
  expect(debug.map((line) => JSON.parse(line)[1]).join('')).toBe(r.stdout.replace(/\n/g, ''));
  const whole = await t.run(['chat', '--model', 'local/lorem', 'write 400 words']);
  expect(r.stdout.replace(/\n/g, '')).toBe(whole.stdout.replace(/\n/g, ''));
});
