import { mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { kitPerTest } from '../support/inprocess-env.js';
import { budgetLimits, budgetsFor, serviceListPrices, spentBy, SpendGuard, type SpendCall } from '../../src/kit/index.js';

// SpendGuard.abandon() called where the work ends while calls of the guard still run (a Promise.all that one call
// rejected): they are counted at their bound, and when one ends after all it is counted once, at what it cost.
let stateDir: string;
let client: RouterClient;

kitPerTest('router-kit-spend-abandon-late-', (f) => ({ stateDir, client } = f));

const call = (): SpendCall => ({ body: { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 64 }, models: ['local/echo'], limitField: 'max_completion_tokens', completes: true });
const guard = (o: Partial<ConstructorParameters<typeof SpendGuard>[0]> = {}) => new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, ...o });
const env = () => ({ ROUTER_STATE_DIR: stateDir });
const ledger = () => readFileSync(join(stateDir, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cost: number; unsettled?: string; reconciles?: string; id?: string });
const answered = { command: 'test', endpoint: '/v1/chat/completions', id: 'gen-late' };

it('a call still running when abandon() is called, answered after: counted once, at its cost, in spent and the budget', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ budgets: budgetLimits({ profile: 'app', daily: 1 }) });
  const [one, two] = [call(), call()];
  await g.check(one);
  await g.check(two);
  expect(g.abandon()).toBe(2);
  g.release();
  // Counted at their bound while they may still run.
  expect(g.spent).toBeCloseTo(2 * b, 12);
  expect((await spentBy(env(), 'app')).today).toBeCloseTo(2 * b, 10);
  // The first answers after all. Old code: its cost came on top of its bound (spent 2b + b/10, the ledger likewise).
  expect(g.record({ ...answered, cost: b / 10 }, one)).toBeUndefined();
  expect(g.spent).toBeCloseTo(b + b / 10, 12);
  const spent = await spentBy(env(), 'app');
  expect(spent.today).toBeCloseTo(b + b / 10, 10);
  expect(spent.damaged).toBeUndefined();
  // The second is refused by the service (never carried out): taken back whole.
  g.failed(new Error('400'), two);
  expect(g.spent).toBeCloseTo(b / 10, 12);
  expect((await spentBy(env(), 'app')).today).toBeCloseTo(b / 10, 10);
  // The answered call's own line keeps its id (reconcile asks the service by it); abandon()'s lines are taken back by name.
  const lines = ledger();
  expect(lines.filter((l) => l.id === 'gen-late').map((l) => l.cost)).toEqual([b / 10]);
  const abandoned = lines.filter((l) => l.unsettled && l.id !== 'gen-late').map((l) => l.id);
  expect(lines.filter((l) => l.reconciles).map((l) => l.reconciles).sort()).toEqual(abandoned.sort());
});

it('one answered after abandon() with no cost said stays at its bound, once; one cut (maybe carried out) stays counted', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ budgets: budgetLimits({ profile: 'app', daily: 1 }) });
  const [one, two] = [call(), call()];
  await g.check(one);
  await g.check(two);
  g.abandon();
  g.record(answered, one);
  g.failed(Object.assign(new Error('cut'), { maybeDelivered: true }), two);
  expect(g.spent).toBeCloseTo(2 * b, 12);
  expect((await spentBy(env(), 'app')).today).toBeCloseTo(2 * b, 10);
  // The answer's line carries its id, at its bound until reconciled.
  expect(ledger().find((l) => l.id === 'gen-late')).toMatchObject({ cost: expect.closeTo(b, 10), unsettled: expect.any(String) });
  g.release();
});

it('without naming the call: once abandon() ended all, a late ending is taken as one of those', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ budgets: budgetLimits({ profile: 'app', daily: 1 }) });
  await g.check(call());
  g.abandon();
  g.record({ ...answered, cost: b / 4 });
  expect(g.spent).toBeCloseTo(b / 4, 12);
  expect((await spentBy(env(), 'app')).today).toBeCloseTo(b / 4, 10);
  // The guard checks on: a new call is held as usual, and its ending is its own.
  const next = call();
  await g.check(next);
  g.unsent(next);
  expect(g.spent).toBeCloseTo(b / 4, 12);
  g.release();
});

it('a cap without a budget: a late answer no longer counts twice against maxCost', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ maxCost: b * 2.5 });
  const one = call();
  await g.check(one);
  g.abandon();
  g.record({ ...answered, cost: b / 10 }, one);
  // Old code: b + b/10, leaving the cap too little for a further whole call.
  expect(g.spent).toBeCloseTo(b / 10, 12);
  const more = call();
  await g.check(more);
  expect(more.body.max_completion_tokens).toBe(64);
});

// The ledger takes no line as abandon() counts the calls (a full disk; here the ledger is a folder for a while): their bounds are held
// past the process for a day instead (an `unrecorded-` hold). One that ends after all, once the ledger takes lines again, is counted once.
const ledgerGone = () => {
  renameSync(join(stateDir, 'usage.jsonl'), join(stateDir, 'usage.aside'));
  mkdirSync(join(stateDir, 'usage.jsonl'));
};
const ledgerBack = () => {
  rmdirSync(join(stateDir, 'usage.jsonl'));
  renameSync(join(stateDir, 'usage.aside'), join(stateDir, 'usage.jsonl'));
};
const spentToday = async () => (await budgetsFor(env(), budgetLimits({ profile: 'app', daily: 1 })))[0]!.spent;
const kept = () => readdirSync(join(stateDir, 'budget-holds')).filter((n) => n.startsWith('unrecorded-'));

it('abandon() the ledger could not take, then a late answer: its cost once, not on top of the bound held for the day', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ budgets: budgetLimits({ profile: 'app', daily: 1 }) });
  const [one, two, three] = [call(), call(), call()];
  for (const c of [one, two, three]) await g.check(c);
  ledgerGone();
  expect(g.abandon()).toBe(3);
  ledgerBack();
  g.release();
  expect(kept()).toHaveLength(1);
  expect(await spentToday()).toBeCloseTo(3 * b, 10);
  // Old code: b/10 in the ledger beside the 3b still held for the day.
  expect(g.record({ ...answered, cost: b / 10 }, one)).toBeUndefined();
  expect(await spentToday()).toBeCloseTo(2 * b + b / 10, 10);
  expect(g.spent).toBeCloseTo(2 * b + b / 10, 12);
  // One refused by the service (never carried out): taken back whole, from the hold too.
  g.failed(new Error('400'), two);
  expect(await spentToday()).toBeCloseTo(b + b / 10, 10);
  // One answered with no cost said: at its bound, now in the ledger (unsettled, for reconcile), held no longer.
  g.record({ ...answered, id: 'gen-late-3' }, three);
  expect(await spentToday()).toBeCloseTo(b + b / 10, 10);
  expect(ledger().find((l) => l.id === 'gen-late-3')).toMatchObject({ cost: expect.closeTo(b, 10), unsettled: expect.any(String) });
  expect(kept()).toEqual([]);
  expect(g.spent).toBeCloseTo(b + b / 10, 12);
});

it('abandon() the ledger could not take, a late answer the ledger still cannot take: the bound stays held, never less', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ budgets: budgetLimits({ profile: 'app', daily: 1 }) });
  const one = call();
  await g.check(one);
  ledgerGone();
  g.abandon();
  g.release();
  expect(g.record({ ...answered, cost: b / 10 }, one)).toMatch(/could not be written/);
  ledgerBack();
  expect(kept()).toHaveLength(1);
  expect(await spentToday()).toBeCloseTo(b, 10);
});
