import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { SETTLE } from '../support/until.js';

// Concurrent gateway requests racing one balance: each bounded request (prices, max_tokens) holds
// its bound before it goes upstream, so together they never spend past the credits.
const PRICE = 0.001;
const MAX_TOKENS = 4;
const N = 10;
let waiting: { res: ServerResponse; stream: boolean; embed: boolean }[] = [];
/** Of a test's N requests, those the gateway answered itself (402): they never come up. */
let refused = 0;
/** Answers the requests held up once every one of the N is either held there or refused: all of them race at once. */
const releaseOnceAllIn = () => {
  if (!waiting.length || waiting.length + refused < N) return;
  const all = waiting;
  waiting = [];
  all.forEach(answer);
};
/** A request of a test's N, its status as soon as it has one (a refusal counted: releaseOnceAllIn), and its body read. */
async function raced(url: string, init: RequestInit): Promise<number> {
  const res = await fetch(url, init);
  if (res.status !== 200) {
    refused++;
    releaseOnceAllIn();
  }
  await res.arrayBuffer();
  return res.status;
}

const answer = ({ res, stream, embed }: { res: ServerResponse; stream: boolean; embed: boolean }) => {
  if (embed) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 40, total_tokens: 40 } }));
    return;
  }
  const usage = { prompt_tokens: 3, completion_tokens: MAX_TOKENS, total_tokens: 3 + MAX_TOKENS };
  const message = { id: 'gen-r', object: 'chat.completion', created: 1, model: 'm' };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, choices: [{ index: 0, message: { role: 'assistant', content: 'a b c d' }, finish_reason: 'length' }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`data: ${JSON.stringify({ ...message, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'a b c d' }, finish_reason: 'length' }] })}\n\n`);
  res.end(`data: ${JSON.stringify({ ...message, object: 'chat.completion.chunk', choices: [], usage })}\n\ndata: [DONE]\n\n`);
};

const gw = gatewayForAll({
  prefix: 'router-credit-race-',
  upstreams: { up: (req, res, body) => {
    waiting.push({ res, stream: body.stream === true, embed: req.url!.endsWith('/embeddings') });
    releaseOnceAllIn();
  } },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", models: { test/m: m }, embedding_models: { test/e: e }, prices: { test/m: { prompt: 0, completion: ${PRICE} }, test/e: { prompt: ${PRICE} } } }\n  - { name: dead, base_url: "http://127.0.0.1:1/v1", models: { test/dead: m }, prices: { test/dead: { prompt: 0, completion: ${PRICE} } } }\n`,
});

describe('concurrent gateway requests on one balance', () => {
  it.each([false, true])('stream %s: credits for 2 of 10 bounded requests: 2 answered, the rest 402, never below zero, each answer charged its cost', async (stream) => {
    const ws = `race-${stream}`;
    const { apiKey } = gw.gateway.store.createWorkspace(ws, 2.5 * MAX_TOKENS * PRICE);
    refused = 0;
    const statuses = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        raced(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', stream, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: `q${i}` }] }) }),
      ),
    );
    // Before: all ten passed "balance above zero" at once, and the balance ended at -0.03.
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 402)).toHaveLength(N - 2);
    expect(gw.gateway.store.balance(ws)).toBeCloseTo(0.5 * MAX_TOKENS * PRICE, 10);
  });

  it('a request no provider answers gives its hold back whole', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('race-dead', 1);
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/dead', max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'q' }] }) });
    expect(res.status).toBe(502);
    await res.arrayBuffer();
    await vi.waitFor(() => expect(gw.gateway.store.balance('race-dead')).toBe(1), SETTLE);
  });

  it('embeddings alike: bounded by the input, never below zero together', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('race-embed', 0.1);
    refused = 0;
    const statuses = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        raced(`${gw.gateway.apiRoot}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/e', input: `q${i}` }) }),
      ),
    );
    const answered = statuses.filter((s) => s === 200).length;
    // Before: all ten answered at 40 tokens each, and the balance ended at -0.3.
    expect(answered).toBeGreaterThanOrEqual(1);
    expect(answered).toBeLessThanOrEqual(2);
    expect(statuses.filter((s) => s === 402)).toHaveLength(N - answered);
    expect(gw.gateway.store.balance('race-embed')).toBeCloseTo(0.1 - answered * 40 * PRICE, 10);
  });
});
