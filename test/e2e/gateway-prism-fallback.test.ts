import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startPrism, type PrismUpstream } from '../support/prism-upstream.js';
import { answerValidator, exampleAnswer } from '../conformance/openapi-fixtures.js';

// Fallback at run time against an upstream we did not write: Stoplight Prism serving the official
// OpenAPI. One provider is Prism asked for its 429 example (a proxy adds `Prefer: code=429` and a
// `Retry-After`, as a rate-limited service sends); one is Prism behind a proxy that sends the answer's
// head and then nothing (an answer stalled after its headers); one is Prism itself. The gateway passes
// the first two over and answers from the third; when only the rate-limited one is left, the caller
// gets a 429 carrying its Retry-After.
let prism: PrismUpstream;
let gateway: Emulator;
let home: string;

beforeAll(async () => {
  prism = await startPrism();
  const limited = await prism.listen((req, res) =>
    prism.toPrism(req, { prefer: 'code=429' }, (r) => {
      res.writeHead(r.statusCode!, { ...r.headers, 'retry-after': '7' });
      r.pipe(res);
    }),
  );
  // The head of Prism's answer, as a stream's, then silence: its body is never sent.
  const stalled = await prism.listen((req, res) =>
    prism.toPrism(req, {}, (r) => {
      r.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    }),
  );
  home = mkdtempSync(join(tmpdir(), 'router-gateway-prism-'));
  const model = 'models: { test/gpt4: openai/gpt-4 }, prices: { test/gpt4: { prompt: 0.001, completion: 0.002 } }';
  const config = parseProviders(`providers:
  - { name: limited, base_url: "${limited}", api_key_env: PRISM_KEY, models: { test/gpt4: openai/gpt-4, test/only-limited: openai/gpt-4 } }
  - { name: stalled, base_url: "${stalled}", api_key_env: PRISM_KEY, first_event_timeout_ms: 1500, timeout_ms: 1500, ${model} }
  - { name: prism, base_url: "${prism.url}", api_key_env: PRISM_KEY, ${model} }
  - name: prism-r
    responses: true
    base_url: "${prism.url}"
    api_key_env: PRISM_KEY
    models: { test/resp: openai/gpt-4 }
    speech_models: { test/voice: openai/gpt-4o-mini-tts }
    prices: { test/resp: { prompt: 0.001, completion: 0.002 }, test/voice: { prompt: 0.0001 } }
local_models: false
`, { PRISM_KEY: 'sk-upstream-prism' });
  gateway = await startEmulator({ stateDir: join(home, 'gateway'), port: 0, gateway: { config } });
});

afterAll(async () => {
  await gateway?.close();
  prism?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

const post = (path: string, body: Record<string, unknown>, key = gateway.store.firstKeys().apiKey) =>
  fetch(`${gateway.apiRoot}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

const chat = async (body: Record<string, unknown>) => {
  const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 16, ...body }) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
};

describe('fallback at run time over Prism serving the official OpenAPI', () => {
  it('past a 429 and an answer stalled after its headers, Prism answers', async () => {
    const got = await chat({ model: 'test/gpt4' });
    expect(got.status, got.text).toBe(200);
    const answer = JSON.parse(got.text) as { provider: string; router_metadata: { summary: string } };
    expect(answer.provider).toBe('prism');
    expect(answer.router_metadata.summary).toMatch(/^chat: test\/gpt4 -> test\/gpt4 via prism \(attempt 3\); failed: limited \(limited: HTTP 429 .*Rate limit exceeded.*\), stalled \(stalled: no answer within first_event_timeout_ms \(1500 ms\)\)$/);
  }, 30_000);

  // Prism cannot stream (a stream asked is its 500 "Cannot serialise complex objects as text"): each provider named with its own words.
  it('streamed: every provider named in the 502, Prism with its own words', async () => {
    const got = await chat({ model: 'test/gpt4', stream: true });
    expect(got.status).toBe(502);
    expect(JSON.parse(got.text).error.message).toMatch(/^All providers for the requested models are unavailable: limited: HTTP 500 .*; stalled: no answer within first_event_timeout_ms \(1500 ms\); prism: HTTP 500 .*Cannot serialise complex objects as text/);
  }, 30_000);

  it('a model only the rate-limited provider serves: the 429 with its Retry-After, in one line', async () => {
    const got = await chat({ model: 'test/only-limited' });
    expect([got.status, got.retryAfter], got.text).toEqual([429, '7']);
    expect(JSON.parse(got.text).error.message).toMatch(/^All providers for the requested models are rate limited: limited: /);
  });
});

// The Responses API and speech with Prism as the upstream: what the gateway sends must pass Prism's check of the
// official request schemas (a 422 otherwise), and what it answers must fit the official answer schemas.
describe('Responses and speech over Prism serving the official OpenAPI', () => {
  it("a response: Prism's example, under the gateway's id and model, fitting the OpenAPI, charged at the prices", async () => {
    const workspace = gateway.store.findKey(gateway.store.firstKeys().apiKey)!.workspace;
    const before = gateway.store.balance(workspace);
    const res = await post('/responses', { model: 'test/resp', input: [{ role: 'user', content: 'hi' }], instructions: 'be brief', max_output_tokens: 64, user: 'alice' });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const answer = JSON.parse(text);
    const validate = answerValidator('post', '/responses');
    expect(validate(answer), JSON.stringify(validate.errors)).toBe(true);
    const example = exampleAnswer('post', '/responses');
    expect([answer.model, answer.output, answer.id]).toEqual(['test/resp', example.output, res.headers.get('x-generation-id')]);
    const cost = example.usage.input_tokens * 0.001 + example.usage.output_tokens * 0.002;
    expect(answer.usage.cost).toBeCloseTo(cost, 10);
    expect(before - gateway.store.balance(workspace)).toBeCloseTo(cost, 10);
  }, 60_000);

  // Prism's first refusal of a streamed /responses takes ~6 s alone (its second, 20 ms): 32 s under the whole suite's load.
  it('a streamed response: Prism cannot stream, named in the 502', async () => {
    const res = await post('/responses', { model: 'test/resp', input: 'hi', stream: true });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^All providers for the requested models are unavailable: prism-r: HTTP 500 .*Cannot serialise complex objects as text/);
  }, 180_000);

  it("speech: Prism's audio/* answered as the spec's audio/pcm, the format it was asked for", async () => {
    const res = await post('/audio/speech', { model: 'test/voice', input: 'hello', voice: 'alloy' }, gateway.store.firstKeys().managementKey);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect([res.status, res.headers.get('content-type'), bytes.toString()]).toEqual([200, 'audio/pcm', '<binary audio data>']);
  }, 60_000);
});
