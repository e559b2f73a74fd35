import { afterAll, beforeAll, expect, it } from 'vitest';
import { answersHi, pricedGateway } from '../support/upstreams.js';

// A key's limit counts what a gateway request cost when nothing bounded it before the answer (no
// max_tokens): charged after the answer, up to the balance, and counted to the key as a bounded one is.
const PRICE = 0.001;
let gw: Awaited<ReturnType<typeof pricedGateway>>;

beforeAll(async () => {
  gw = await pricedGateway(answersHi, PRICE);
});

afterAll(() => gw?.close());

const call = (method: string, path: string, key: string, body?: unknown) => gw.json(method, path, key, body);

it('an unbounded gateway request counts toward the key that made it, and its limit then refuses', async () => {
  const key = await gw.keyWithLimit('capped', 0.005);
  const ask = () => call('POST', '/v1/chat/completions', key, { model: 'test/m', messages: [{ role: 'user', content: 'hi' }] });
  expect((await ask()).status).toBe(200);
  const after = (await call('GET', '/v1/key', key)).body.data;
  expect(after.usage).toBeCloseTo(5 * PRICE, 10);
  expect(after.limit_remaining).toBeCloseTo(0, 10);
  expect((await ask()).status).toBe(403);
});
