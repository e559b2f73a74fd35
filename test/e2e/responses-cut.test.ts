import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { SETTLE } from '../support/until.js';

// A streamed `router responses` cut by the user (Ctrl-C, `| head`) is charged for what was generated,
// as chat's is (newcomer-eighth.test.ts): it is kept in the usage ledger with its response id, without
// a cost, and `usage --reconcile` then makes the ledger agree with the credits charged.
let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(async () => {
  await t?.close();
});

const LONG = ['responses', '--model', 'local/lorem', '--max-output-tokens', '200000', 'write 200000 words'];
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
  }, SETTLE);

it('Ctrl-C mid-stream: exit 130, the response in the ledger with its id; reconciled, the ledger agrees with the credits', async () => {
  const child = t.spawn(LONG);
  let err = '';
  child.stderr!.on('data', (c) => (err += c));
  // Interrupted once the answer is under way (its first text is out).
  child.stdout!.once('data', () => child.kill('SIGINT'));
  const code = await new Promise((done) => child.on('close', done));
  expect(code).toBe(130);
  expect(err).toContain('note: the answer was cut before its cost came; it is in the usage ledger without one (router usage --reconcile asks the service)\n');
  const [line] = ledger();
  expect(line).toMatchObject({ command: 'responses', endpoint: '/v1/responses', model: 'local/lorem', id: expect.stringMatching(/^resp_/) });
  expect(line).not.toHaveProperty('cost');
  await known(line!.id as string);
  expect((await t.run(['usage', '--reconcile'])).code).toBe(0);
  const total = JSON.parse((await t.run(['usage', '--json'])).stdout).total.cost;
  expect(total).toBeGreaterThan(0);
  expect(total).toBe(await credits());
}, 60_000);

it('| head -c 5: the reader gone ends router at once, and the response is still in the ledger', async () => {
  const before = ledger().length;
  const child = spawn('bash', ['-c', 'node "$BIN" "$@" | head -c 5 > /dev/null', 'sh', ...LONG], { env: { ...process.env, ...t.env, BIN }, stdio: ['ignore', 'pipe', 'pipe'] });
  const code = await new Promise((done) => child.on('close', done));
  expect(code).toBe(0);
  const kept = ledger().slice(before);
  expect(kept).toHaveLength(1);
  expect(kept[0]).toMatchObject({ command: 'responses', model: 'local/lorem', id: expect.stringMatching(/^resp_/) });
}, 60_000);
