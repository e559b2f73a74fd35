import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

// What a scripting user meets at the edges of the process (task cli23): a stderr that takes no more.
let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(() => t.close());

/** Runs bin/router.cjs with stderr on /dev/full: what it printed, its exit code. */
function withStderrFull(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string }> {
  const full = openSync('/dev/full', 'w');
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...t.env, ROUTER_NO_LOG: '1', ...env }, stdio: ['ignore', 'pipe', full] });
  closeSync(full);
  let stdout = '';
  child.stdout!.on('data', (c) => (stdout += c));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout })));
}

it.skipIf(process.platform !== 'linux')('a fact said on a full stderr (chat --usage, a note before the call) leaves the answer and exit 0', async () => {
  // Was exit 1: the failed write to stderr ended the process, the answer after a note before the call never came.
  expect(await withStderrFull(['chat', '--model', 'local/echo', '--usage', 'hi'])).toEqual({ code: 0, stdout: 'hi\n' });
  expect(await withStderrFull(['chat', '--model', 'local/echo', 'hi'], { ROUTER_MODLE: 'x' })).toEqual({ code: 0, stdout: 'hi\n' });
  expect(await withStderrFull(['models', '--json', 'id'], { ROUTER_MODLE: 'x' })).toMatchObject({ code: 0, stdout: expect.stringContaining('"id":"local/echo"') });
});

it.skipIf(process.platform !== 'linux')('a failure on a full stderr keeps its own exit code', async () => {
  expect(await withStderrFull(['chat', '--model', 'local/echo', '--temperature', '9', 'hi'])).toEqual({ code: 2, stdout: '' });
});
