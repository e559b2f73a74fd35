// Ctrl-C in a shell loop of router calls stops the loop, as it stops a loop of `sleep` or `curl`.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { takeLock } from '../../src/internal/file-lock.js';
import { expect, it } from 'vitest';
import { BIN, startTestEnv } from '../helpers.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startTestEnv());

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

it('Ctrl-C once the answer is printed, while the call keeps its turn, still ends the loop: it was exit 0, and the loop went on', async () => {
  const first = await t.run(['chat', '--model', 'local/echo', 'kept before']);
  expect(first.code).toBe(0);
  const kept = join(t.env.ROUTER_STATE_DIR!, 'conversations');
  const [file] = readdirSync(kept).filter((f) => f.endsWith('.json'));
  // The conversation's lock, held by this test: the call that continues it prints its answer, then waits
  // to keep its turn until the test lets go. The Ctrl-C comes in that wait, with nothing left to stop.
  mkdirSync(kept, { recursive: true });
  const lock = takeLock(join(kept, `${file}.lock`));
  if (!('release' in lock)) throw new Error('lock not taken');
  const loop = 'for n in 1 2; do node "$BIN" chat -c --no-stdin "again $n"; echo "after $n: $?"; done; echo "loop ended"';
  const shell = spawn('bash', ['-c', loop], { env: { ...process.env, ...t.env, BIN }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  shell.stderr.on('data', (c) => (stderr += c));
  shell.stdout.on('data', (c) => {
    stdout += c;
    if (stdout !== 'again 1\n') return;
    process.kill(-shell.pid!, 'SIGINT');
    // Let go once the signal is surely in (a signal to another process is not delivered synchronously).
    setTimeout(() => lock.release(), 300);
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => shell.on('close', (c, s) => done([c, s])));
  expect(stdout).toBe('again 1\n');
  expect({ code, signal, stderr }).toEqual({ code: null, signal: 'SIGINT', stderr: '' });
  // The turn, whole when the Ctrl-C came, is kept.
  const messages = (JSON.parse(readFileSync(join(kept, file!), 'utf8')) as { messages: { content: string }[] }).messages.map((m) => m.content);
  expect(messages).toEqual(['kept before', 'kept before', 'again 1', 'again 1']);
});

it.skipIf(!HAS_TMUX)('Ctrl-C read as a key at an --approve prompt in a bash loop ends the loop too', async () => {
  const tools = join(t.dir, 'loop-approve-tools.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: 'echo sunny' }]));
  const term = new Terminal(t.env);
  try {
    // The prompt reads the terminal raw: Ctrl-C is a key router reads, no SIGINT reaches bash.
    term.run(`for n in 1 2; do node ${BIN} chat --model local/tools --tools ${tools} --approve "weather in Rome $n"; echo "after $n: $?"; done`);
    await term.waitFor(/Run get_weather \{"city":"weather in Rome 1"\}\?/);
    term.keys('C-c');
    // The shell's prompt back (the loop ended), or the next call's question (it went on).
    const screen = await term.waitFor(/error: interrupted\n(.|\n)*(\$\s*$|Rome 2"\}\?)/);
    expect(screen).not.toContain('after 1:');
    expect(screen).not.toContain('Rome 2"}?');
    expect(await term.lastExit()).toBe(130);
  } finally {
    await term.close();
  }
});
