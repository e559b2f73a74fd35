import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBatch } from '../support/emulator-folder.js';
import { localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';

// A batch request whose providers all fail is asked of them again after pauses (0.5 s, 2 s): its
// result says each failure once, with how many times it came, not the same words three times over.
let page: LocalUpstream;
let gw: Awaited<ReturnType<typeof testGateway>>;

beforeAll(async () => {
  // A web UI's page where the API was meant (a base_url without its /v1): a 200 that is no answer.
  page = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>Ollama is running</body></html>');
  });
  gw = await testGateway(`providers:\n  - { name: page, base_url: "${page.baseUrl}", models: { test/m: m } }\n`, 'failure-words', { batchDelayMs: 0 });
});
afterAll(async () => {
  await gw?.close();
  await page?.close();
});

describe('a batch request every provider fails, asked again after pauses', () => {
  it('names each failure once, with how many times it came', async () => {
    const seen = await runBatch(gw.gateway, 'spec', '/v1/chat/completions', 'test/m', [{ messages: [{ role: 'user', content: 'hi' }] }]);
    expect(seen.request_counts).toMatchObject({ total: 1, completed: 0, failed: 1 });
    const [item] = seen.results;
    expect(item.response.status_code).toBe(502);
    const asked = page.seen.length;
    expect(asked).toBeGreaterThan(1);
    expect(item.error.message).toBe(`All providers for the requested models are unavailable: page: HTTP 200 text/html, not JSON (<html><body>Ollama is running</body></html>): is base_url the API's (for Ollama, vLLM and OpenAI it ends in /v1)? (${asked} times)`);
  });
});
