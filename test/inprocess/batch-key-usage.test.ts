import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { answersHi, pricedGateway } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// A batch's charge counts on the key that created it, as its requests one by one would: a key with a
// limit could spend the workspace's credits past that limit through batches (they counted on the
// workspace only), and its usage did not show them. Both kinds: a fake model's batch, charged at its
// end, and one over an upstream, each request charged as it is answered.
const PRICE = 0.001;
let gw: Awaited<ReturnType<typeof pricedGateway>>;

beforeAll(async () => {
  gw = await pricedGateway(answersHi, PRICE, { batchDelayMs: 0 });
});

afterAll(() => gw?.close());

const call = (method: string, path: string, key: string, body?: unknown) => gw.json(method, path, key, body);

it.each([['a fake model', 'local/echo'], ['an upstream model', 'test/m']])("%s's batch counts on the key that created it", async (_kind, model) => {
  const key = await gw.keyWithLimit(`batches ${model}`, 1);
  const requests = [1, 2, 3].map((i) => ({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `hello ${i}` }] } }));
  const created = await call('POST', '/v1/batches', key, { endpoint: '/v1/chat/completions', model, completion_window: '24h', requests });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  // The batch's end, and its charge (made when it ends, or at the get that finds it ended).
  const done = await vi.waitFor(async () => {
    const got = await call('GET', `/v1/batches/${created.body.id}`, key);
    expect(got.body.status).toBe('completed');
    return got.body;
  }, SETTLE);
  const cost = done.usage.cost as number;
  expect(cost).toBeGreaterThan(0);
  await vi.waitFor(async () => expect((await call('GET', '/v1/key', key)).body.data.usage).toBeCloseTo(cost, 10), SETTLE);
  expect((await call('GET', '/v1/key', key)).body.data.limit_remaining).toBeCloseTo(1 - cost, 10);
});
