import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { HAS_TMUX, Terminal } from '../support/tmux.js';

// Issue 46, round 8: a streamed answer cut by the user (Ctrl-C, `| head`) is charged for what was
// generated; the usage ledger (and so the budgets) lost it. It is kept with its id, without a cost,
// and `usage --reconcile` then makes the ledger agree with the credits charged.
let t: TestEnv;
let term: Terminal | undefined;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(async () => {
  term?.close();
  await t?.close();
});

const LONG = ['chat', '--model', 'local/lorem', '--max-tokens', '200000', 'write 200000 words'];
const ledger = () => {
  const path = join(t.env.ROUTER_STATE_DIR!, 'usage.jsonl');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
};
const credits = async (): Promise<number> => JSON.parse((await t.run(['credits', '--json'], { env: { ROUTER_MANAGEMENT_KEY: t.managementKey } })).stdout).total_usage;
/** Waits until the service knows the generation (the emulator keeps a cancelled one once it sees the caller gone). */
const known = (id: string) =>
  vi.waitFor(async () => {
    const res = await fetch(`${t.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(res.status).toBe(200);
  }, { timeout: 10_000, interval: 50 });

it('Ctrl-C mid-stream: exit 130, the call in the ledger with its id; reconciled, the ledger agrees with the credits', async () => {
  const child = t.spawn(LONG);
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  // Interrupted once the answer is under way (its first text is out).
  child.stdout!.once('data', () => child.kill('SIGINT'));
  const code = await new Promise((done) => child.on('close', done));
  expect(code).toBe(130);
  expect(err).toContain('note: the answer was cut before its cost came; it is in the usage ledger without one (router usage --reconcile asks the service)\n');
  const [line] = ledger();
  expect(line).toMatchObject({ command: 'chat', endpoint: '/v1/chat/completions', model: 'local/lorem', id: expect.stringMatching(/^gen-/) });
  expect(line).not.toHaveProperty('cost');
  await known(line!.id as string);
  expect((await t.run(['usage', '--reconcile'])).code).toBe(0);
  const total = JSON.parse((await t.run(['usage', '--json'])).stdout).total.cost;
  expect(total).toBeGreaterThan(0);
  expect(total).toBe(await credits());
}, 60_000);

it('| head -c 5: the reader gone ends router at once, and the call is still in the ledger', async () => {
  const before = ledger().length;
  const child = spawn('bash', ['-c', 'node "$BIN" "$@" | head -c 5 > /dev/null', 'sh', ...LONG], { env: { ...process.env, ...t.env, BIN }, stdio: ['ignore', 'pipe', 'pipe'] });
  const code = await new Promise((done) => child.on('close', done));
  expect(code).toBe(0);
  const kept = ledger().slice(before);
  expect(kept).toHaveLength(1);
  expect(kept[0]).toMatchObject({ command: 'chat', model: 'local/lorem', id: expect.stringMatching(/^gen-/) });
}, 60_000);

it.skipIf(!HAS_TMUX)('chat -i: an answer stopped with Ctrl-C is in the ledger with its id (it was charged)', async () => {
  const before = ledger().length;
  term = new Terminal(t.env);
  term.run(`node ${BIN} chat -i --model local/lorem --max-tokens 200000 --raw`);
  await term.waitFor(/^>\s*$/m);
  term.run('write 200000 words');
  // Stopped once the answer is under way: its words are on the screen.
  await term.waitFor(/^[A-Z][a-z]+ [a-z]+ [a-z]+/m);
  term.keys('C-c');
  await term.waitFor(/answer stopped/);
  term.keys('C-d');
  expect(await term.lastExit()).toBe(0);
  const kept = ledger().slice(before);
  expect(kept).toHaveLength(1);
  expect(kept[0]).toMatchObject({ command: 'chat', model: 'local/lorem', id: expect.stringMatching(/^gen-/) });
  expect(kept[0]).not.toHaveProperty('cost');
}, 60_000);
