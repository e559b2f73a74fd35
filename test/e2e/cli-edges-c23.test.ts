import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { runProcess } from '../support/run-process.js';

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

/** Runs a bash line with $BIN the CLI against the in-process emulator: stdout, stderr, exit code. */
async function inBash(line: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { status, stdout, stderr } = await runProcess('bash', ['-c', line], { env: { ...process.env, ...t.env, BIN, ROUTER_NO_LOG: '1' } });
  return { code: status, stdout, stderr };
}

it('a pipe named as a file (<(cmd), /dev/stdin) is read once: -f, --sf, batch create; a folder is still refused', async () => {
  // Was exit 2, "not a regular file (a device, a FIFO or a socket)" and "give - and pipe the requests into stdin".
  expect(await inBash('node "$BIN" chat --model local/echo -f <(echo piped text) hi')).toEqual({ code: 0, stdout: 'piped text\n\nhi\n', stderr: '' });
  expect(await inBash('echo from stdin | node "$BIN" chat --model local/echo -f /dev/stdin hi')).toEqual({ code: 0, stdout: 'from stdin\n\nhi\n', stderr: '' });
  expect(await inBash('node "$BIN" chat --model local/echo --sf <(echo be brief) --dry-run hi')).toMatchObject({ code: 0, stdout: expect.stringContaining('"content": "be brief\\n"') });
  const line = JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'x' }] } });
  expect(await inBash(`node "$BIN" batch create <(echo '${line}') --model local/echo`)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^batch_\w+\n$/) });
  expect(await inBash('node "$BIN" chat --model local/echo -f "$PWD" hi')).toMatchObject({ code: 2, stdout: '' });
});
