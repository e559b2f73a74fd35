import { describe, expect, it, vi } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { SETTLE } from '../support/until.js';

// A provider whose usage says far more than was asked (max_tokens 10, 100000 completion tokens):
// the request's bound was held, and the answer is charged past it only up to what is left of the
// balance, as an unbounded answer and a batch's are. Before: charged in full, 1 credit went to -99.
const PRICE = 0.001;

const gw = gatewayForAll({
  prefix: 'router-usage-past-bound-',
  upstreams: { up: (_req, res, body) => {
    const usage = { prompt_tokens: 5, completion_tokens: 100_000, total_tokens: 100_005 };
    const base = { id: 'gen-big', created: 1, model: 'm' };
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] })}\n\n`);
      res.end(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage })}\n\ndata: [DONE]\n\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage }));
  } },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", models: { test/m: m }, prices: { test/m: { prompt: ${PRICE}, completion: ${PRICE} } } }\n`,
});

describe('an upstream usage larger than the request allowed', () => {
  it.each([false, true])('stream %s: charged up to the balance, never below zero; the generation says what was charged', async (stream) => {
    const ws = `past-bound-${stream}`;
    const { apiKey } = gw.gateway.store.createWorkspace(ws, 1);
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', max_tokens: 10, stream, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(200);
    const text = await res.text();
    // The answer's usage still says its full cost.
    expect(text).toContain('"cost":100.005');
    expect(gw.gateway.store.balance(ws)).toBe(0);
    const id = (stream ? (JSON.parse(text.split('data: ')[1]!.split('\n')[0]!) as { id: string }) : (JSON.parse(text) as { id: string })).id;
    const generation = await vi.waitFor(async () => {
      const r = await fetch(`${gw.gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { data: { total_cost: number } }).data;
    }, SETTLE);
    expect(generation.total_cost).toBe(1);
  });
});
