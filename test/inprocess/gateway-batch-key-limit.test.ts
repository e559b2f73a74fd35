import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// A batch over an upstream was checked against its creating key's limit only when it was created:
// every request then went upstream and the key spent past its limit. Now each request is checked as it
// goes, as the key's own requests are (its limit, less what the batch's requests in flight hold): once
// it does not cover the next one, nothing more is sent, the rest are failed items with the service's
// 403 "Key limit exceeded", and the batch ends failed with that 403, as it does when credits run out.
const PRICE = 0.001;
let up: LocalUpstream;
let gw: Awaited<ReturnType<typeof testGateway>>;

beforeAll(async () => {
  // 100 tokens an answer: 0.1 USD, 0.05 at the batch price.
  up = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 50, total_tokens: 100 } }));
  });
  gw = await testGateway(`batch_concurrency: 1\nproviders:\n  - { name: up, base_url: "${up.baseUrl}", models: { test/m: m }, prices: { test/m: { prompt: ${PRICE}, completion: ${PRICE} } } }\n`, 'batch-key-limit', { batchDelayMs: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

const call = async (key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.gateway.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};

describe('a batch over an upstream and its key’s limit', () => {
  it('stops once the key’s limit does not cover the next request: the rest fail with its 403, the key never spends past it', async () => {
    const { managementKey } = gw.gateway.store.firstKeys();
    // Unbounded requests (no max_tokens): the first holds nothing, each later one the largest charge so far (0.05).
    const { key } = (await call(managementKey, 'POST', '/v1/keys', { name: 'capped', limit: 0.12 })).body as { key: string };
    const asked = up.seen.length;
    const requests = Array.from({ length: 5 }, (_, i) => ({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `q${i}` }] } }));
    const created = await call(key, 'POST', '/v1/batches', { endpoint: '/v1/chat/completions', model: 'test/m', completion_window: '24h', requests });
    expect(created.status).toBe(202);
    const batch = await vi.waitFor(async () => {
      const seen = (await call(key, 'GET', `/v1/batches/${created.body.id}`)).body;
      expect(['completed', 'failed']).toContain(seen.status);
      return seen;
    }, SETTLE);
    // Before: all 5 sent, completed, the key's usage 0.25 on a 0.12 limit.
    expect(up.seen.length - asked).toBe(2);
    expect(batch.status).toBe('failed');
    expect(batch.error.code).toBe(403);
    expect(batch.error.message).toBe("Key limit exceeded (total limit): the batch stopped after 2 of 5 requests; the other 3 were not sent and are not charged (raise the key's limit, or use another key, and submit them again)");
    expect(batch.request_counts).toEqual({ total: 5, completed: 2, failed: 3 });
    const unsent = batch.results.filter((r: any) => r.response.status_code === 403);
    expect(unsent).toHaveLength(3);
    expect(unsent[0].error).toMatchObject({ error_type: 'permission_denied', message: 'Key limit exceeded (total limit). Manage it using https://openrouter.ai/settings/keys' });
    expect(batch.usage.cost).toBeCloseTo(0.1, 10);
    const usage = (await call(key, 'GET', '/v1/key')).body.data.usage as number;
    expect(usage).toBeCloseTo(0.1, 10);
    expect(usage).toBeLessThanOrEqual(0.12);
  });
});
