import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerTokens, holdingUpstream, pricedGateway } from '../support/upstreams.js';

// Unbounded requests (no max_tokens, no model max_completion_tokens) held nothing while in flight: a
// burst of them passed chargeable() together (the key's limit and the balance not yet spent) and
// spent past both. Each now holds the largest cost of the model's answers so far (at most what is
// left), so the burst's later ones are refused; each is still charged its real cost, never the estimate.
const PRICE = 0.001;
let gw: Awaited<ReturnType<typeof pricedGateway>>;
/** Requests whose content is "hold", kept unanswered until the test answers them. */
const upstream = holdingUpstream((content) => (content === 'small' ? 100 : 400));
const held = upstream.held;

beforeAll(async () => {
  gw = await pricedGateway(upstream.handler, PRICE);
});

afterAll(() => gw?.close());

const ask = (key: string, content: string) => gw.call('POST', '/v1/chat/completions', key, { model: 'test/m', messages: [{ role: 'user', content }] });
/** Sends a "hold" request and resolves once the upstream has it (with its answer to come). */
async function holdOne(key: string): Promise<{ res: Promise<Response> }> {
  const seen = upstream.next();
  const res = ask(key, 'hold');
  await seen;
  return { res };
}

describe('a burst of unbounded requests', () => {
  it('is refused past the key’s limit once what is in flight covers it; each charged its real cost', async () => {
    const key = await gw.keyWithLimit('capped', 1);
    held.length = 0;
    expect((await ask(key, 'first')).status).toBe(200);
    // Left 0.6: the first of the burst holds 0.4, the second the 0.2 left; the third finds none.
    const one = await holdOne(key);
    const two = await holdOne(key);
    const three = await ask(key, 'third');
    // Before: 200 (nothing held; the limit counted only what was charged).
    expect(three.status).toBe(403);
    expect(await three.text()).toContain('Key limit exceeded');
    held.splice(0).forEach((res) => answerTokens(res, 400));
    expect([(await one.res).status, (await two.res).status]).toEqual([200, 200]);
    const usage = ((await (await gw.call('GET', '/v1/key', key)).json()) as { data: { usage: number } }).data.usage;
    // Each answer its real cost: 0.4 three times (the one that crossed the limit in full, as alone).
    expect(usage).toBeCloseTo(1.2, 10);
  });

  it('is refused once the balance is held, which never goes below zero; a cheap answer is charged its cost, not the estimate', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('burst', 1);
    held.length = 0;
    expect((await ask(apiKey, 'first')).status).toBe(200);
    expect(gw.gateway.store.balance('burst')).toBeCloseTo(0.6, 10);
    const one = await holdOne(apiKey);
    const two = await holdOne(apiKey);
    const three = await ask(apiKey, 'third');
    // Before: 200 (the balance was above zero): three answers for 0.6 of credit.
    expect(three.status).toBe(402);
    held.splice(0).forEach((res) => answerTokens(res, 400));
    expect([(await one.res).status, (await two.res).status]).toEqual([200, 200]);
    // The first 0.4, the second the 0.2 that was left.
    expect(gw.gateway.store.balance('burst')).toBeCloseTo(0, 10);
  });

  it('leaves a fake model’s whole answer nothing of what the burst holds: 402, the burst charged in full', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('mixed', 1);
    held.length = 0;
    expect((await ask(apiKey, 'first')).status).toBe(200);
    const one = await holdOne(apiKey);
    const two = await holdOne(apiKey);
    // The balance (0.6) is held whole by the two in flight: a local model's answer, paid up front, finds none.
    const local = await gw.call('POST', '/v1/chat/completions', apiKey, { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
    // Before: 200 (its hold saw the balance, not the estimates), and the burst was charged its cost less.
    expect(local.status).toBe(402);
    // Said as it is: the balance, and what of it the requests in flight hold (it read "costs $x, the balance is $0.6").
    expect(((await local.json()) as { error: { message: string } }).error.message).toMatch(/, the balance is \$0\.6, of which \$0\.6 is held by requests in flight\. /);
    held.splice(0).forEach((res) => answerTokens(res, 400));
    expect([(await one.res).status, (await two.res).status]).toEqual([200, 200]);
    // The first 0.4, the second the 0.2 left: the balance the burst held went to the burst.
    expect(gw.gateway.store.balance('mixed')).toBeCloseTo(0, 10);
  });

  it('holds the estimate but charges a cheaper answer its real cost', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('cheap', 1);
    expect((await ask(apiKey, 'first')).status).toBe(200);
    expect((await ask(apiKey, 'small')).status).toBe(200);
    expect(gw.gateway.store.balance('cheap')).toBeCloseTo(1 - 0.4 - 0.1, 10);
  });
});
