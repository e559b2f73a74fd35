// Ctrl-C in a shell loop of router calls stops the loop, as it stops a loop of `sleep` or `curl`.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(() => t?.close());

it('Ctrl-C during a call in a bash for loop ends the loop: router dies of SIGINT, $? 130 in the shell', async () => {
  // The first call streams for long; the ones after it would answer at once.
  const loop = 'for n in 200000 3 3; do node "$BIN" chat --no-stdin --model local/lorem --max-tokens 200000 "write $n words"; echo "after $n: $?"; done; echo "loop ended"';
  // Its own process group, as a terminal's foreground job: Ctrl-C goes to bash and to the router it waits for.
  const shell = spawn('bash', ['-c', loop], { env: { ...process.env, ...t.env, BIN }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  shell.stderr.on('data', (c) => (stderr += c));
  shell.stdout.on('data', (c) => {
    if (!stdout) process.kill(-shell.pid!, 'SIGINT');
    stdout += c;
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => shell.on('close', (c, s) => done([c, s])));
  expect(stderr).toMatch(/error: interrupted\n$/);
  // bash goes on after a command that exits 130 itself (it handled Ctrl-C, as bash reads it); it stops when the command died of the signal.
  expect(stdout).not.toContain('after');
  expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' });
  expect(t.requests().filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
});
