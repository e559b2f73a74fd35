import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answerTokens, holdingUpstream, pricedGateway } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// A batch over an upstream checked its key's limit less what its own requests in flight held, and the
// key's live requests checked theirs less what live requests held: neither saw the other's holds, so a
// live request passed a limit a batch request in flight already held, and the key spent past it. A
// batch's holds are now on the key as its requests' are (billing.ts), seen by both.
const PRICE = 0.001;
let gw: Awaited<ReturnType<typeof pricedGateway>>;
const upstream = holdingUpstream(() => 200);
const held = upstream.held;

beforeAll(async () => {
  gw = await pricedGateway(upstream.handler, PRICE, { batchDelayMs: 0 });
});

afterAll(() => gw?.close());

describe('a key’s limit under a batch in flight and its live requests', () => {
  it('a live request is refused when the batch’s request in flight holds what the limit leaves', async () => {
    const key = await gw.keyWithLimit('shared', 0.5);
    // The batch's request holds its bound at the batch price: 800 tokens asked, 0.4 and its prompt's share (under 0.5).
    const seen = upstream.next();
    const created = await gw.json('POST', '/v1/batches', key, { endpoint: '/v1/chat/completions', model: 'test/m', completion_window: '24h', requests: [{ custom_id: 'b0', body: { messages: [{ role: 'user', content: 'hold' }], max_tokens: 800 } }] });
    expect(created.status).toBe(202);
    await seen;
    // A live request bound at 0.2 and more: the limit's 0.5 less the batch's hold (over 0.4) does not cover it.
    const live = await gw.call('POST', '/v1/chat/completions', key, { model: 'test/m', messages: [{ role: 'user', content: 'now' }], max_tokens: 200 });
    // Before: 200: the batch's hold was unseen, so the two together could spend past the limit.
    expect(live.status).toBe(403);
    expect(await live.text()).toContain('Key limit exceeded');
    held.splice(0).forEach((res) => answerTokens(res, 200));
    await vi.waitFor(async () => expect((await gw.json('GET', `/v1/batches/${created.body.id}`, key)).body.status).toBe('completed'), SETTLE);
    // Settled: the batch's answer (0.2 at half price) is on the key, its hold given back, so a live request fits again.
    const usage = (await gw.json('GET', '/v1/key', key)).body.data.usage as number;
    expect(usage).toBeCloseTo(0.1, 10);
    expect((await gw.call('POST', '/v1/chat/completions', key, { model: 'test/m', messages: [{ role: 'user', content: 'now' }], max_tokens: 200 })).status).toBe(200);
  });
});
