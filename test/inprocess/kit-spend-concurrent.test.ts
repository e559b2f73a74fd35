import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { kitPerTest } from '../support/inprocess-env.js';
import { budgetLimits, serviceListPrices, SpendGuard, type SpendCall } from '../../src/kit/index.js';

// One SpendGuard shared by a program's concurrent calls (a pool of prompts): the calls under way are held
// to the cap together, and the first checks made at once hold the budgets once.
let stateDir: string;
let client: RouterClient;

kitPerTest('router-kit-spend-concurrent-', (f) => ({ stateDir, client } = f));

const call = (): SpendCall => ({ body: { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 64 }, models: ['local/echo'], limitField: 'max_completion_tokens', completes: true });
const guard = (o: Partial<ConstructorParameters<typeof SpendGuard>[0]> = {}) => new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: stateDir }, ...o });

it('a call checked while another of the guard is under way is held to what the cap has left beside it: it waits for it', async () => {
  const bound = (await guard({ estimate: true }).check(call())).bound!;
  let waited = '';
  let wait!: (v: 'waiting') => void;
  const said = new Promise<'waiting'>((resolve) => (wait = resolve));
  const g = guard({ maxCost: bound * 1.5, on: { waiting: (why) => ((waited = why), wait('waiting')) } });
  await g.check(call());
  const second = call();
  const checked = g.check(second);
  // Old code: the second call was let go at once, the two together bound to 2× the bound, over the cap of 1.5×.
  expect(await Promise.race([said, checked.then(() => 'checked')])).toBe('waiting');
  expect(waited).toMatch(/^calls of this guard under way: beside them this call would pass maxCost \$/);
  g.record({ command: 'test', endpoint: '/v1/chat/completions', cost: bound / 10 });
  await checked;
  expect(second.body.max_completion_tokens).toBe(64);
  expect(g.spent).toBeCloseTo(bound / 10);
});

it('a call that would not fit even with none under way is refused at once, not made to wait', async () => {
  const bound = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ maxCost: bound * 0.001 });
  await expect(g.check(call())).rejects.toMatchObject({ code: 'cost_cap_exceeded' });
});

it('first checks made at once under a budget make one hold, let go by release()', async () => {
  const g = guard({ budgets: budgetLimits({ profile: 'app', daily: 1 }) });
  await Promise.all([g.check(call()), g.check(call()), g.check(call())]);
  const holds = () => (existsSync(join(stateDir, 'budget-holds')) ? readdirSync(join(stateDir, 'budget-holds')).filter((n) => n.endsWith('.json')) : []);
  expect(holds().length).toBe(1);
  for (let i = 0; i < 3; i++) g.record({ command: 'test', endpoint: '/v1/chat/completions', cost: 0 });
  g.release();
  expect(holds()).toEqual([]);
});

const holdsUsd = () => {
  const d = join(stateDir, 'budget-holds');
  return existsSync(d) ? readdirSync(d).filter((n) => n.endsWith('.json')).map((n) => (JSON.parse(readFileSync(join(d, n), 'utf8')) as { usd: number }).usd) : [];
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

it("a guard's calls under way hold the budget together: another guard (as another process would) is let go only beside their sum", async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const budgets = budgetLimits({ profile: 'app', daily: b * 2.5 });
  const g = guard({ budgets });
  await Promise.all([g.check(call()), g.check(call())]);
  // Old code: the hold was the latest call's bound alone, b, with 2b under way.
  expect(sum(holdsUsd())).toBeCloseTo(2 * b, 12);
  const third = call();
  const checked = await guard({ budgets }).check(third);
  // Old code: let go as it was (64 tokens), 3b under way under a budget of 2.5b. Now cut to what is left beside the 2b.
  expect(third.body.max_completion_tokens).toBeLessThan(64);
  expect(2 * b + checked.bound!).toBeLessThanOrEqual(b * 2.5 + 1e-12);
  for (let i = 0; i < 2; i++) g.record({ command: 'test', endpoint: '/v1/chat/completions', cost: 0 });
  g.release();
});

it('a prompt of a pool ending (release) while another runs keeps that call held until it ends too', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ budgets: budgetLimits({ profile: 'app', daily: 1 }) });
  await Promise.all([g.check(call()), g.check(call())]);
  g.record({ command: 'test', endpoint: '/v1/chat/completions', cost: b / 10 });
  g.release();
  // Old code: released, the call still under way held nothing.
  expect(sum(holdsUsd())).toBeCloseTo(b, 12);
  g.failed(Object.assign(new Error('cut'), { maybeDelivered: true }));
  expect(holdsUsd()).toEqual([]);
  const ledger = readFileSync(join(stateDir, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cost: number; unsettled?: string });
  expect(ledger.map((l) => [l.cost, !!l.unsettled])).toEqual([[b / 10, false], [expect.closeTo(b, 12), true]]);
});

it('a call checked and never settled (its send threw, the program went on) is ended by abandon(): counted at its bound, its hold let go', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ budgets: budgetLimits({ profile: 'app', daily: 1 }) });
  await g.check(call());
  await g.check(call());
  g.record({ command: 'test', endpoint: '/v1/chat/completions', cost: b / 10 });
  // The second call's send threw and its program never said so: release() waits for it, for ever.
  g.release();
  expect(sum(holdsUsd())).toBeCloseTo(b, 12);
  // Before, there was no way to end it: the bound stayed held for the process's life.
  expect(g.abandon()).toBe(1);
  expect(holdsUsd()).toEqual([]);
  expect(g.spent).toBeCloseTo(b / 10 + b, 12);
  const ledger = readFileSync(join(stateDir, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cost: number; unsettled?: string });
  expect(ledger.map((l) => [l.cost, !!l.unsettled])).toEqual([[b / 10, false], [expect.closeTo(b, 12), true]]);
  // Nothing left under way: a later abandon() ends none, and the guard checks on without waiting.
  expect(g.abandon()).toBe(0);
});

it('abandon() without a budget: a cap no longer waits on a call lost', async () => {
  const b = (await guard({ estimate: true }).check(call())).bound!;
  const g = guard({ maxCost: b * 2.5 });
  await g.check(call());
  await g.check(call());
  // Before, with two bounds under way the third waited for one to end, which none would.
  g.abandon();
  expect(g.spent).toBeCloseTo(2 * b, 12);
  const third = call();
  await g.check(third);
  expect(third.body.max_completion_tokens).toBeLessThan(64);
});
