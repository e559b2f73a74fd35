import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { pricedGateway, sseChunk } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// `is_byok` (api.md: chat usage and batch usage; the OpenAPI: generations) says whether a request was carried out
// with a provider key the caller's account brought. The gateway's providers file holds the gateway's own keys,
// and it has no /v1/byok: no caller brings one, so it is false everywhere, also when the upstream (OpenRouter
// under its owner's BYOK key) says true of its own usage.
const usage = { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, is_byok: true, cost: 0.001 };
const chunk = (fields: object) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', ...fields })}\n\n`;
let gw: Awaited<ReturnType<typeof pricedGateway>>;
let key: string;
beforeAll(async () => {
  gw = await pricedGateway((_req, res, body) => {
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(sseChunk('hi') + chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) + chunk({ choices: [], usage }) + 'data: [DONE]\n\n');
  }, 0.001);
  key = gw.gateway.store.firstKeys().apiKey;
});
afterAll(() => gw?.close());

const ask = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });
const generationByok = async (id: string) => (await gw.json('GET', `/v1/generation?id=${id}`, key)).body.data.is_byok;

it.each(['test/m', 'local/echo'])('%s: a chat answer, whole and streamed, and its generation say is_byok false', async (model) => {
  const whole = await gw.json('POST', '/v1/chat/completions', key, ask(model));
  expect(whole.body.usage.is_byok).toBe(false);
  expect(await generationByok(whole.body.id)).toBe(false);
  const streamed = await (await gw.call('POST', '/v1/chat/completions', key, ask(model, true))).text();
  const last = streamed.split('\n').filter((l) => l.includes('"usage"')).map((l) => JSON.parse(l.slice(6)));
  expect(last.map((c) => c.usage.is_byok)).toEqual([false]);
  expect(await generationByok(last[0].id)).toBe(false);
});

it.each(['test/m', 'local/echo'])('%s: a batch\'s usage and its result\'s say is_byok false', async (model) => {
  const created = await gw.json('POST', '/v1/batches', key, { endpoint: '/v1/chat/completions', model, completion_window: '24h', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }] } }] });
  expect(created.status).toBe(202);
  const batch = await vi.waitFor(async () => {
    const b = (await gw.json('GET', `/v1/batches/${created.body.id}`, key)).body;
    if (b.status !== 'completed') throw new Error(`batch ${b.status}`);
    return b;
  }, SETTLE);
  expect(batch.usage.is_byok).toBe(false);
  expect(batch.results[0].response.body.usage.is_byok).toBe(false);
  expect(await generationByok(batch.results[0].response.body.id)).toBe(false);
});
