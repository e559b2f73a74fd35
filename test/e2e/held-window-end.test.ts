import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runCli, startTestEnv, type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';

// A CLI killed -9 before its answer named the call leaves a hold; the run that finds the process dead writes its
// `held-…` line, sent between its round's send and `sent_before`. That end was when the dead process was found (here
// two hours later): `usage --reconcile` then took what the key spent in all those hours (another machine's call) as
// this call's. It is now the dead process's last sign of life: its hold's last write, as its call was sent.
type Line = { id?: string; cost: number; unsettled?: string; reconciles?: string; real_cost?: number; sent_after?: string; sent_before?: string };
const HOUR = 60 * 60 * 1000;
let t: TestEnv;
afterAll(() => t?.close());

it("a killed call's held window ends at its process's last sign of life, not when it was found dead", async () => {
  t = await startTestEnv({ flavor: 'spec' });
  await t.admin('faults', { faults: ['slow,delay_ms=600000,path=/chat/completions,times=1'] });
  const state = join(t.dir, 'killed-late-found');
  const env: Record<string, string> = { ...t.env, ROUTER_STATE_DIR: state, ROUTER_DAILY_BUDGET: '5', ROUTER_MANAGEMENT_KEY: t.managementKey };
  const holds = () => (existsSync(join(state, 'budget-holds')) ? readdirSync(join(state, 'budget-holds')).filter((n) => n.endsWith('.json')) : []);
  const asked = () => t.requests().filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions').length;
  const askedBefore = asked();
  const child = t.spawn(['chat', '--no-stream', '--model', 'local/lorem', '--max-tokens', '200', 'write 500 words'], env);
  const closed = new Promise((r) => child.on('close', r));
  try {
    expect(await until(() => holds().length > 0 && asked() > askedBefore)).toBe(true);
  } finally {
    child.kill('SIGKILL');
    await closed;
  }
  const killedAt = Date.now();
  // Half an hour on, by the service's clock, the same key is used elsewhere (a call no ledger here names).
  const moved = await fetch(`${t.apiRoot}/_emulator/clock`, { method: 'POST', headers: { authorization: `Bearer ${t.operatorKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ advance_seconds: 1800 }) });
  expect(moved.status).toBe(200);
  const other = await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/lorem', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }) });
  expect(other.status).toBe(200);
  expect(((await other.json()) as { usage: { cost: number } }).usage.cost).toBeGreaterThan(0);
  // Found dead two hours after the kill, by `usage --reconcile` itself, which settles the line in the same run.
  const later = await runCli(['usage', '--reconcile', '--json'], { env: { ...env, NODE_OPTIONS: `--require ${join(import.meta.dirname, '../support/clock-ahead.cjs')}`, ROUTER_TEST_CLOCK_AHEAD_MS: String(2 * HOUR) } });
  expect(later.code, later.stderr).toBe(0);
  const lines = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
  const held = lines.find((l) => l.unsettled)!;
  expect(held.id).toMatch(/^held-/);
  // Old code: sent_before two hours after the kill.
  expect(Date.parse(held.sent_before!)).toBeLessThanOrEqual(killedAt);
  expect(Date.parse(held.sent_before!)).toBeGreaterThanOrEqual(Date.parse(held.sent_after!));
  // The slowed answer was never charged (the fake hung up before any content): settled at nothing, not at the other call's cost.
  expect((JSON.parse(later.stdout) as { held: { settled: unknown[] } }).held.settled).toEqual([expect.objectContaining({ id: held.id, charged: 0 })]);
  expect(lines.filter((l) => l.reconciles === held.id)).toEqual([expect.objectContaining({ real_cost: 0 })]);
  expect(lines.reduce((sum, l) => sum + l.cost, 0)).toBeCloseTo(0, 10);
});
