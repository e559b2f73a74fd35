import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatch } from '../support/emulator-folder.js';
import { answersHi, pricedGateway } from '../support/upstreams.js';

// A batch request over providers whose provider preferences leave no provider: its result carries the
// 404 a chat request gets, naming the model asked and who serves it, not a bare "No endpoints found".
let gw: Awaited<ReturnType<typeof pricedGateway>>;

beforeAll(async () => {
  gw = await pricedGateway(answersHi, 0.000001, { batchDelayMs: 0 });
});
afterAll(() => gw?.close());

describe('a batch request no provider may serve', () => {
  it('fails with the words of the chat route: the model, the slug named, the providers that serve it', async () => {
    const body = { messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, provider: { only: ['nope'] } };
    const chat = await gw.json('POST', '/v1/chat/completions', gw.gateway.store.firstKeys().apiKey, { ...body, model: 'test/m' });
    expect(chat.status).toBe(404);
    const seen = await runBatch(gw.gateway, 'spec', '/v1/chat/completions', 'test/m', [body]);
    expect(seen.request_counts).toMatchObject({ total: 1, completed: 0, failed: 1 });
    const [item] = seen.results;
    expect(item.response.status_code).toBe(404);
    expect(item.response.body).toEqual(chat.body);
    expect(item.error.message).toBe(chat.body.error.message);
    expect(item.error.message).toMatch(/provider\.only names nope.*test\/m: served here by up/);
    expect(gw.upstream.seen).toHaveLength(0);
  });
});
