import { existsSync, readdirSync } from 'node:fs';
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
  g.release();
  expect(holds()).toEqual([]);
});
