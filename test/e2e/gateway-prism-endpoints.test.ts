import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { sseData, streamedText } from '../support/aimock.js';
import { waitBound } from '../support/until.js';
import { startPrism, type PrismUpstream } from '../support/prism-upstream.js';

// The gateway over Stoplight Prism serving the official OpenAPI (an upstream we did not write), for
// every endpoint it routes: chat, streamed chat, Responses (whole and streamed), embeddings, each with
// fallback at run time: the first provider is Prism asked for its 503 example (a proxy adds
// `Prefer: code=503`), the second Prism itself. Prism cannot stream (asked `Accept: text/event-stream`
// it fails to write the OpenAPI's example as text, its 500), so the second is Prism behind a proxy
// asking it for JSON: an upstream that answers a stream request whole, as some OpenAI-compatible
// servers do. The caller asked for a stream gets one all the same: chat's did; Responses' was
// relayed as the upstream's JSON (an SDK's `responses.stream()` read nothing from it).
let prism: PrismUpstream;
let gateway: Emulator;
let home: string;
let key: string;

/** The request on to Prism with `extra` headers, Prism's answer back as it came. */
const toPrism = (extra: Record<string, string>) => (req: IncomingMessage, res: ServerResponse) =>
  prism.toPrism(
    req,
    extra,
    (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    },
    () => res.destroy(),
  );

beforeAll(async () => {
  prism = await startPrism();
  const failing = await prism.listen(toPrism({ prefer: 'code=503' }));
  const whole = await prism.listen(toPrism({ accept: 'application/json' }));
  home = mkdtempSync(join(tmpdir(), 'router-gateway-prism-endpoints-'));
  const models = 'responses: true, models: { test/gpt4: openai/gpt-4 }, embedding_models: { test/emb: openai/text-embedding-3-small }';
  const config = parseProviders(`providers:
  - { name: failing, base_url: "${failing}", api_key_env: PRISM_KEY, ${models} }
  - { name: prism, base_url: "${whole}", api_key_env: PRISM_KEY, ${models}, prices: { test/gpt4: { prompt: 0.001, completion: 0.002 }, test/emb: { prompt: 0.001, completion: 0 } } }
local_models: false
`, { PRISM_KEY: 'sk-upstream-prism' });
  gateway = await startEmulator({ stateDir: join(home, 'gateway'), port: 0, gateway: { config } });
  key = gateway.store.firstKeys().apiKey;
});

afterAll(async () => {
  await gateway?.close();
  prism?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

const post = async (path: string, body: Record<string, unknown>) => {
  const res = await fetch(`${gateway.apiRoot}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify(body) });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};

/** Each attempt as [provider, ok]: the 503 passed over, Prism answering. */
const PASSED_OVER = [
  ['failing', false],
  ['prism', true],
];
const attempts = (meta: { attempts: { provider: string; ok: boolean }[] }) => meta.attempts.map((a) => [a.provider, a.ok]);
const spent = () => gateway.store.balance(gateway.store.findKey(key)!.workspace);

describe('the gateway over Prism serving the official OpenAPI, past a provider failing with its 503', () => {
  it('chat, whole: the example answer, charged at the file prices', async () => {
    const before = spent();
    const got = await post('/chat/completions', { model: 'test/gpt4', messages: [{ role: 'user', content: 'hi' }] });
    expect(got.status, got.text).toBe(200);
    const body = JSON.parse(got.text);
    expect([body.choices[0].message.content, body.provider, body.model]).toEqual(['The capital of France is Paris.', 'prism', 'test/gpt4']);
    expect(attempts(body.router_metadata)).toEqual(PASSED_OVER);
    expect(body.router_metadata.attempts[0].error).toMatch(/^failing: HTTP 503/);
    // The OpenAPI example's usage: 25 prompt and 10 completion tokens.
    expect(before - spent()).toBeCloseTo(25 * 0.001 + 10 * 0.002, 9);
  });

  it('chat, streamed: the answer Prism gave whole, as a stream', async () => {
    const got = await post('/chat/completions', { model: 'test/gpt4', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect([got.status, got.type], got.text).toEqual([200, 'text/event-stream']);
    expect(streamedText(got.text)).toBe('The capital of France is Paris.');
    const events = sseData(got.text);
    expect(events.at(-1)).toBe('[DONE]');
    expect(attempts(events.find((e) => e !== '[DONE]' && e.router_metadata).router_metadata)).toEqual(PASSED_OVER);
  });

  it('Responses, whole: the example answer under the gateway model id', async () => {
    const got = await post('/responses', { model: 'test/gpt4', input: 'hi' });
    expect(got.status, got.text).toBe(200);
    const body = JSON.parse(got.text);
    expect([body.object, body.model, body.output[0].content[0].text]).toEqual(['response', 'test/gpt4', 'Why did the chicken cross the road? To get to the other side!']);
    expect(attempts(body.router_metadata)).toEqual(PASSED_OVER);
  });

  it('Responses, streamed: the answer Prism gave whole, as the Responses stream of it', async () => {
    const before = spent();
    const got = await post('/responses', { model: 'test/gpt4', input: 'hi', stream: true });
    // Before: 200 application/json, Prism's answer as it came to a caller that asked for a stream.
    expect([got.status, got.type], got.text).toEqual([200, 'text/event-stream']);
    // Each event named by an `event:` line, as the Responses API streams them; the name is the data's type.
    const named = got.text
      .split('\n\n')
      .filter((e) => e.includes('data: '))
      .map((e) => ({ name: /^event: (.*)$/m.exec(e)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(e)![1]!) as { type: string; delta?: string; response?: any; sequence_number: number } }));
    expect(named.filter((e) => e.name !== e.data.type)).toEqual([]);
    const events = named.map((e) => e.data);
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[3]!.delta).toBe('Why did the chicken cross the road? To get to the other side!');
    const done = events.at(-1)!.response;
    expect([done.status, done.model, done.id]).toEqual(['completed', 'test/gpt4', events[0]!.response.id]);
    expect(attempts(done.router_metadata)).toEqual(PASSED_OVER);
    // The OpenAPI example's usage: 10 input and 20 output tokens.
    expect(before - spent()).toBeCloseTo(10 * 0.001 + 20 * 0.002, 9);
  });

  it("the openai SDK's responses.stream() and chat stream read it as a stream", async () => {
    const client = new OpenAI({ baseURL: `${gateway.apiRoot}/v1`, apiKey: key, maxRetries: 0 });
    const final = await client.responses.stream({ model: 'test/gpt4', input: 'hi' }).finalResponse();
    expect([final.status, final.output_text]).toEqual(['completed', 'Why did the chicken cross the road? To get to the other side!']);
    let text = '';
    for await (const chunk of await client.chat.completions.create({ model: 'test/gpt4', stream: true, messages: [{ role: 'user', content: 'hi' }] })) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('The capital of France is Paris.');
  });

  it('embeddings: the example vector under the gateway model id', async () => {
    const got = await post('/embeddings', { model: 'test/emb', input: 'hi' });
    expect(got.status, got.text).toBe(200);
    const body = JSON.parse(got.text);
    expect([body.model, body.data[0].embedding, body.provider]).toEqual(['test/emb', [0.0023064255, -0.009327292, 0.015797347], 'prism']);
    expect(attempts(body.router_metadata)).toEqual(PASSED_OVER);
  });
  // Prism answers every Responses request with one id (its example's `resp_abc123`) and embeddings with
  // none, as OpenAI's do. A batch's results kept them: two results named one generation (the second's
  // lost, the SDK's lookup found the first's), and an embeddings result had no id and no generation.
  it("a batch's Responses and embeddings results each under an id of the gateway's, found by the SDK's generation lookup", async () => {
    const { OpenRouter } = await import('@openrouter/sdk');
    const sdk = new OpenRouter({ apiKey: key, serverURL: `${gateway.apiRoot}/v1` });
    for (const [endpoint, model, upstreamId] of [['/v1/responses', 'test/gpt4', 'resp_abc123'], ['/v1/embeddings', 'test/emb', null]] as const) {
      const created = await post('/batches', { endpoint, model, completion_window: '24h', requests: ['one', 'two'].map((input) => ({ custom_id: input, body: { input } })) });
      expect(created.status, created.text).toBe(202);
      let seen: any;
      for (const end = Date.now() + waitBound(); !['completed', 'failed'].includes(seen?.status) && Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
        seen = await (await fetch(`${gateway.apiRoot}/v1/batches/${JSON.parse(created.text).id}`, { headers: { authorization: `Bearer ${key}` } })).json();
      }
      expect(seen.request_counts, endpoint).toMatchObject({ total: 2, completed: 2 });
      const bodies = seen.results.map((r: any) => r.response.body);
      const ids = bodies.map((b: any) => b.id);
      expect(new Set(ids).size, `${endpoint}: ${ids}`).toBe(2);
      for (const body of bodies) {
        const g = (await sdk.generations.getGeneration({ id: body.id })).data;
        expect([g.id, g.model, g.providerName, g.upstreamId, g.apiType], endpoint).toEqual([body.id, model, 'prism', upstreamId, endpoint === '/v1/embeddings' ? 'embeddings' : 'completions']);
        expect(g.totalCost, endpoint).toBeCloseTo(body.usage.cost, 12);
      }
    }
  });
  // Its first provider (`failing`) gives no prices (an unpriced one charges its upstream's own cost):
  // the model list took that provider's and said the model was free, while each answer was charged at Prism's.
  it("the SDK's model list says the prices the model is charged at, not its unpriced first provider's 0", async () => {
    const { OpenRouter } = await import('@openrouter/sdk');
    const sdk = new OpenRouter({ apiKey: key, serverURL: `${gateway.apiRoot}/v1` });
    const listed: Record<string, unknown> = {};
    for await (const page of await sdk.models.list()) for (const m of page.result.data) listed[m.id] = m.pricing;
    expect(listed['test/gpt4']).toEqual({ prompt: '0.001', completion: '0.002' });
    const embeddings = await sdk.embeddings.listModels();
    expect(embeddings.result.data.find((m) => m.id === 'test/emb')?.pricing).toEqual({ prompt: '0.001', completion: '0' });
  });
});
