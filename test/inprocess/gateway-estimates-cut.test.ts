import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerTokens, pricedGateway, sseChunk } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// An unbounded request holds, while in flight, the largest cost the model's answers have had. Only
// whole answers were noted: a stream the upstream broke after content went out was charged what was
// relayed but taught nothing, so a model whose streams break held nothing and a burst of them spent
// past the balance. The cut's charge is noted as a whole answer's is, and so is a caller's hang-up's
// (before, only the broken stream's was).
const PRICE = 0.001;
const held: ServerResponse[] = [];
let arrived: (() => void) | undefined;
const handler = (_req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => {
  const content = String((body.messages as { content: string }[])[0]!.content);
  if (content === 'hold') {
    held.push(res);
    return arrived?.();
  }
  if (content !== 'break' && content !== 'part') return answerTokens(res, 2);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(sseChunk(null));
  for (let i = 0; i < 40; i++) res.write(sseChunk(`token${i} `));
  // `part`: the rest never comes, until the caller hangs up.
  if (content === 'break') setTimeout(() => res.destroy(), 20);
};
let gw: Awaited<ReturnType<typeof pricedGateway>>;

beforeAll(async () => {
  gw = await pricedGateway(handler, PRICE);
});

afterAll(() => gw?.close());

const ask = (key: string, content: string, stream = false) => gw.call('POST', '/v1/chat/completions', key, { model: 'test/m', stream, messages: [{ role: 'user', content }] });
/** Sends a "hold" request and resolves once the upstream has it (with its answer to come). */
async function holdOne(key: string): Promise<{ res: Promise<Response> }> {
  const seen = new Promise<void>((resolve) => (arrived = resolve));
  const res = ask(key, 'hold');
  await seen;
  return { res };
}

const ESTIMATE = '/v1/chat/completions\ntest/m';

/** A burst on a key whose credits cover 1.5 times `cost`: two held requests hold it all, the third is refused. */
async function burstAfter(name: string, cost: number): Promise<void> {
  const { apiKey } = gw.gateway.store.createWorkspace(name, cost * 1.5);
  const one = await holdOne(apiKey);
  const two = await holdOne(apiKey);
  // The two in flight hold the cut's cost and the half left. Before: 200 (nothing held), three answers for 1.5 of them.
  expect((await ask(apiKey, 'third')).status).toBe(402);
  held.splice(0).forEach((res) => answerTokens(res, 2));
  expect([(await one.res).status, (await two.res).status]).toEqual([200, 200]);
}

it('a stream broken after content teaches the estimate what it was charged: the next burst holds it', async () => {
  const learner = gw.gateway.store.createWorkspace('learner', 10);
  const broken = await ask(learner.apiKey, 'break', true);
  const text = await broken.text();
  expect(text).toContain('"finish_reason":"error"');
  const cost = 10 - gw.gateway.store.balance('learner');
  expect(cost).toBeGreaterThan(0.03);
  // Noted as the model's largest cost so far (before: nothing, no whole answer had come).
  expect(gw.gateway.store.estimates?.get(ESTIMATE)).toBeCloseTo(cost, 10);
  await burstAfter('burst', cost);
});

it("a caller's hang-up after content teaches the estimate what it was charged, as a broken stream does", async () => {
  gw.gateway.store.estimates?.delete(ESTIMATE);
  const learner = gw.gateway.store.createWorkspace('leaver', 10);
  const caller = new AbortController();
  const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${learner.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'part' }] }) });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('token39')) text += decoder.decode((await reader.read()).value, { stream: true });
  caller.abort();
  await vi.waitFor(() => expect(gw.gateway.store.balance('leaver')).toBeLessThan(10), SETTLE);
  const cost = 10 - gw.gateway.store.balance('leaver');
  expect(cost).toBeGreaterThan(0.03);
  // Noted as the model's largest cost so far. Before: undefined (a hang-up taught nothing).
  expect(gw.gateway.store.estimates?.get(ESTIMATE)).toBeCloseTo(cost, 10);
  await burstAfter('burst-after-hang-up', cost);
});
