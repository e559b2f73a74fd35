import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { BudgetHold, budgetLimits, serviceListPrices, spentBy, SpendGuard, type SpendCall } from '../../src/kit/index.js';
import { runCli } from '../helpers.js';
import { kitPerTest, type KitTest } from '../support/inprocess-env.js';

// A program's SpendGuard.abandon() while its call ran (the call was charged, its answer lost to the program): the call is
// counted at its bound. Its line is `held-…` with the time it was sent in and its key's hash, as a killed CLI's
// (hold-record.ts), so `usage --reconcile` settles it by the key's spend an hour after. Before, it was `abandoned-…`, which
// reconcile never asks about: at its bound for ever.
let f: KitTest;
kitPerTest('router-abandon-reconcile-', (x) => (f = x));

type Line = { id?: string; cost: number; unsettled?: string; reconciles?: string; real_cost?: number; key_hash?: string; sent_after?: string; sent_before?: string };
const ledger = () => readFileSync(join(f.stateDir, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
const keyUsage = async (key: string) => ((await (await fetch(`${f.emu.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { usage: number } }).data.usage;

/** A key of its own (the line is settled by its key's spend in its time), a client on it, and a guard giving the key's
 * hash with the hold, as the CLI gives it (src/cli/spend/spend-guard.ts); a chat call of local/echo under it. */
async function guardedKey(name: string) {
  const made = await fetch(`${f.emu.apiRoot}/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${f.env.ROUTER_MANAGEMENT_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
  expect(made.status).toBe(201);
  const apiKey = ((await made.json()) as { key: string }).key;
  const keyHash = createHash('sha256').update(apiKey).digest('hex');
  const client = new RouterClient({ apiKey, apiRoot: f.emu.apiRoot });
  const env = { ROUTER_STATE_DIR: f.stateDir };
  const g = new SpendGuard({ prices: serviceListPrices(client), env, budgets: budgetLimits({ profile: 'default', daily: 5 }), newHold: (e, profile, usd, call, ignore) => new BudgetHold(e, profile, usd, { ...call, key_hash: keyHash }, ignore) });
  const body = { model: 'local/echo', messages: [{ role: 'user' as const, content: 'hi' }], max_completion_tokens: 64 };
  const call: SpendCall = { body, models: ['local/echo'], limitField: 'max_completion_tokens', completes: true };
  return { apiKey, keyHash, client, env, g, body, call };
}

/** `router usage --reconcile --json` with the key, `ahead` ms later on its clock (test/support/clock-ahead.cjs). */
const reconcile = (apiKey: string, ahead: number) =>
  runCli(['usage', '--reconcile', '--json'], { env: { ...f.env, ROUTER_STATE_DIR: f.stateDir, ROUTER_API_KEY: apiKey, NODE_OPTIONS: `--require ${join(import.meta.dirname, '../support/clock-ahead.cjs')}`, ROUTER_TEST_CLOCK_AHEAD_MS: String(ahead) } });

it('a call charged and then abandoned is settled by `usage --reconcile` an hour after, at what its key was charged', async () => {
  const { apiKey, keyHash, client, g, body, call } = await guardedKey('abandoned');
  try {
    const before = await keyUsage(apiKey);
    await g.check(call);
    await client.chat.create(body);
    // The program lost the answer (a Promise.all that rejected elsewhere): the call is abandoned, never recorded.
    expect(g.abandon()).toBe(1);
    g.release();
    const charged = Math.round(((await keyUsage(apiKey)) - before) * 1e10) / 1e10;
    expect(charged).toBeGreaterThan(0);
    const [line] = ledger();
    expect(line).toMatchObject({ id: expect.stringMatching(/^held-[0-9a-f]{16}$/), key_hash: keyHash, unsettled: expect.any(String) });
    expect(line!.cost).toBeGreaterThan(charged);
    expect(Date.parse(line!.sent_after!)).toBeLessThanOrEqual(Date.parse(line!.sent_before!));
    // Within the hour it waits; an hour after, it is settled at the charge (before: never asked about, at its bound).
    const now = await reconcile(apiKey, 0);
    expect(now.code, now.stderr).toBe(0);
    expect((JSON.parse(now.stdout) as { held: { waiting: string[] } }).held.waiting).toEqual([line!.id]);
    const later = await reconcile(apiKey, 61 * 60_000);
    expect(later.code, later.stderr).toBe(0);
    expect((JSON.parse(later.stdout) as { held: { settled: unknown[] } }).held.settled).toEqual([expect.objectContaining({ id: line!.id, bound: line!.cost, charged })]);
    expect(ledger().filter((l) => l.reconciles === line!.id)).toEqual([expect.objectContaining({ real_cost: charged })]);
    expect(ledger().reduce((sum, l) => sum + l.cost, 0)).toBeCloseTo(charged, 10);
  } finally {
    await client.close();
  }
});

it('a call abandoned, settled by `usage --reconcile`, then answered over an hour later: counted once, no line damaged', async () => {
  const { apiKey, client, env, g, body, call } = await guardedKey('late');
  try {
    const before = await keyUsage(apiKey);
    await g.check(call);
    // The answer is read by the program only later: abandon() came first, while it ran.
    const answer = await client.chat.create(body);
    expect(g.abandon()).toBe(1);
    const charged = Math.round(((await keyUsage(apiKey)) - before) * 1e10) / 1e10;
    const [held] = ledger();
    const later = await reconcile(apiKey, 61 * 60_000);
    expect(later.code, later.stderr).toBe(0);
    expect((JSON.parse(later.stdout) as { held: { settled: unknown[] } }).held.settled).toEqual([expect.objectContaining({ id: held!.id, charged })]);
    // Its answer ends now, after the settling: its own line counts it, abandon()'s is taken back from what it was settled at.
    expect(g.record({ command: 'test', endpoint: '/v1/chat/completions', id: answer.id, model: 'local/echo', cost: charged }, call)).toBeUndefined();
    g.release();
    // Old code: the take-back of the bound was refused (the line already settled): counted twice, one line damaged.
    const spent = await spentBy(env, 'default');
    expect(spent.damaged).toBeUndefined();
    expect(spent.today).toBeCloseTo(charged, 10);
    expect(g.spent).toBeCloseTo(charged, 10);
    // reconcile later asks for the answer's own line, by its id: still once.
    const again = await reconcile(apiKey, 62 * 60_000);
    expect(again.code, again.stderr).toBe(0);
    const after = await spentBy(env, 'default');
    expect(after.damaged).toBeUndefined();
    expect(after.today).toBeCloseTo(charged, 10);
    expect(ledger().reduce((sum, l) => sum + l.cost, 0)).toBeCloseTo(charged, 10);
  } finally {
    await client.close();
  }
});
