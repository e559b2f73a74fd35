import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { breaking, deadPort, failing, localUpstream, stall, type LocalUpstream } from '../support/upstreams.js';

// `router serve --providers`: chat through upstreams spoken to only as OpenAI-compatible servers
// (another emulator, and small local servers that refuse, stall, fail and break streams).
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let key: string;
let locals: LocalUpstream[];
let five: LocalUpstream;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const slow = await stall();
  five = await failing(503);
  const early = await breaking(0);
  const late = await breaking(2);
  // Answers whole even when asked to stream (as some servers do).
  const whole = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'w-1', object: 'chat.completion', created: 7, model: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'whole answer' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }));
  });
  locals = [slow, five, early, late, whole];
  const up = `${upstream.apiRoot}/v1`;
  const yaml = `
providers:
  - { name: dead, base_url: "http://127.0.0.1:${await deadPort()}/v1", models: { test/chat: local/echo } }
  - { name: slow, base_url: "${slow.baseUrl}", timeout_ms: 300, models: { test/chat: local/echo } }
  - { name: five, base_url: "${five.baseUrl}", api_key_env: FIVE_KEY, models: { test/chat: local/echo, test/five-only: local/echo }, embedding_models: { test/embed: local/embed } }
  - { name: early-break, base_url: "${early.baseUrl}", models: { test/chat: local/echo } }
  - name: up
    base_url: ${up}
    api_key_env: UP_KEY
    models: { test/chat: local/echo, test/sticky: local/echo }
    embedding_models: { test/embed: local/embed }
    prices: { test/chat: { prompt: 0.001, completion: 0.002 }, test/embed: { prompt: 0.0001 } }
  - { name: up-b, base_url: "${up}", api_key_env: UP_KEY, models: { test/sticky: local/echo, test/own-cost: local/lorem } }
  - { name: late-break, base_url: "${late.baseUrl}", models: { test/late: local/echo } }
  - { name: whole, base_url: "${whole.baseUrl}", models: { test/whole: x } }
  - { name: no-v1, base_url: "${upstream.apiRoot}", api_key_env: UP_KEY, models: { test/no-v1: local/echo } }
`;
  const config = parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey, FIVE_KEY: 'five-key' });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
  key = gateway.store.firstKeys().apiKey;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  for (const l of locals ?? []) await l.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'test/chat', messages: [{ role: 'user', content: text }], ...extra });

async function post(e: Emulator, body: unknown, headers: Record<string, string> = {}, k = key) {
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: (res.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as any) : undefined };
}
const metadataOn = { 'x-router-metadata': 'enabled' };
const balance = () => gateway.store.balance(gateway.store.findKey(key)!.workspace);
const events = (sse: string) => sse.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6)).map((d) => (d === '[DONE]' ? d : JSON.parse(d)));

describe('a gateway over upstream providers', () => {
  it('answers from the upstream emulator as it would answer itself, under the gateway model id and provider', async () => {
    const direct = await post(upstream, { model: 'local/echo', messages: [{ role: 'user', content: 'hello there' }] }, {}, upstream.store.firstKeys().apiKey);
    const via = await post(gateway, ask('hello there', { provider: { only: ['up'] } }));
    expect(via.status).toBe(200);
    expect(via.json.choices[0].message.content).toBe(direct.json.choices[0].message.content);
    expect([via.json.model, via.json.provider]).toEqual(['test/chat', 'up']);
  });

  it('passes over a refused, a slow, a 5xx and an early-breaking provider, and says so in router_metadata', async () => {
    for (const stream of [false, true]) {
      const res = await post(gateway, ask('fall back', { stream }), metadataOn);
      expect(res.status).toBe(200);
      const meta = stream ? events(res.text).find((e) => e !== '[DONE]' && e.router_metadata)?.router_metadata : res.json.router_metadata;
      expect(meta.attempt).toBe(5);
      expect(meta.strategy).toBe('fallback');
      expect(meta.attempts.map((a: any) => a.provider)).toEqual(['dead', 'slow', 'five', 'early-break', 'up']);
      expect(meta.attempts.slice(0, 4).map((a: any) => a.error)).toEqual([expect.stringContaining('refused'), "slow: timed out: no answer's head within timeout_ms (300 ms)", expect.stringContaining('HTTP 503'), expect.stringMatching(/early-break: (stream ended|connection lost|stream broken|the stream ended)/)]);
      if (stream) expect(events(res.text).at(-1)).toBe('[DONE]');
    }
  });

  it('says what to check when a provider answers 404 (a base_url without its /v1)', async () => {
    const res = await post(gateway, { model: 'test/no-v1', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(502);
    expect(res.json.error.message).toMatch(/no-v1: HTTP 404 .*: is base_url the API's root \(for Ollama, vLLM and OpenAI it ends in \/v1\), and the upstream model name one it serves\?$/);
  });

  it('follows provider.only, ignore, order and allow_fallbacks', async () => {
    const ignored = await post(gateway, ask('x', { provider: { ignore: ['dead', 'slow', 'five', 'early-break'] } }), metadataOn);
    expect([ignored.json.provider, ignored.json.router_metadata.attempt]).toEqual(['up', 1]);
    const ordered = await post(gateway, ask('x', { provider: { order: ['up'] } }), metadataOn);
    expect([ordered.json.provider, ordered.json.router_metadata.attempt]).toEqual(['up', 1]);
    const only = await post(gateway, ask('x', { provider: { only: ['five'] } }));
    expect(only.status).toBe(502);
    expect(only.json.error.message).toContain('five: HTTP 503');
    const noFallback = await post(gateway, ask('x', { provider: { order: ['five'], allow_fallbacks: false } }));
    expect(noFallback.status).toBe(502);
    const none = await post(gateway, ask('x', { provider: { only: ['nobody'] } }));
    expect(none.status).toBe(404);
  });

  it('walks the models list when a model has no provider left', async () => {
    const res = await post(gateway, { model: 'test/five-only', models: ['test/chat'], provider: { ignore: ['dead', 'slow'] }, messages: [{ role: 'user', content: 'hi' }] }, metadataOn);
    expect(res.status).toBe(200);
    expect(res.json.model).toBe('test/chat');
    expect(res.json.router_metadata.attempts.map((a: any) => `${a.provider}:${a.model}`)).toEqual(['five:test/five-only', 'five:test/chat', 'early-break:test/chat', 'up:test/chat']);
  });

  it('falls back from an upstream to a fake model, streamed and not', async () => {
    for (const stream of [false, true]) {
      const res = await post(gateway, { model: 'test/five-only', models: ['local/echo'], stream, messages: [{ role: 'user', content: 'to the fakes' }] }, metadataOn);
      expect(res.status).toBe(200);
      const meta = stream ? (events(res.text)[0] as any).router_metadata : res.json.router_metadata;
      expect(meta.attempts.map((a: any) => `${a.provider}:${a.model}`)).toEqual(['five:test/five-only', 'local-alpha:local/echo']);
      const text = stream ? events(res.text).map((e: any) => e.choices?.[0]?.delta?.content ?? '').join('') : res.json.choices[0].message.content;
      expect(text).toContain('to the fakes');
    }
  });

  it('ends a stream broken after its first token with the error chunk, and charges nothing for it', async () => {
    const before = balance();
    const res = await post(gateway, { model: 'test/late', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const all = events(res.text);
    expect(all.filter((e) => e !== '[DONE]' && e.choices?.[0]?.delta?.content).map((e: any) => e.choices[0].delta.content)).toEqual(['token0 ', 'token1 ']);
    const last = all.at(-2) as any;
    expect(last.error.code).toBe(502);
    expect(last.choices[0].finish_reason).toBe('error');
    expect(balance()).toBe(before);
  });

  it('streams an answer the upstream gave whole to a stream request', async () => {
    const res = await post(gateway, { model: 'test/whole', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const all = events(res.text) as any[];
    expect(all.map((e) => (e === '[DONE]' ? e : e.usage ? 'usage' : e.choices[0].delta.content ?? e.choices[0].finish_reason))).toEqual(['whole answer', 'stop', 'usage', '[DONE]']);
    expect([all[0].id, all[0].model, all[0].provider]).toEqual([expect.stringMatching(/^gen-/), 'test/whole', 'whole']);
  });

  it('charges the upstream usage at the configured prices, or the upstream cost', async () => {
    let before = balance();
    const priced = await post(gateway, ask('cost me', { provider: { only: ['up'] } }));
    const u = priced.json.usage;
    expect(u.cost).toBeCloseTo(u.prompt_tokens * 0.001 + u.completion_tokens * 0.002, 10);
    expect(before - balance()).toBeCloseTo(u.cost, 10);
    before = balance();
    const direct = await post(upstream, { model: 'local/lorem', messages: [{ role: 'user', content: 'own cost' }] }, {}, upstream.store.firstKeys().apiKey);
    const own = await post(gateway, { model: 'test/own-cost', messages: [{ role: 'user', content: 'own cost' }] });
    expect(own.json.usage.cost).toBe(direct.json.usage.cost);
    expect(own.json.usage.cost).toBeGreaterThan(0);
    expect(before - balance()).toBeCloseTo(own.json.usage.cost, 10);
  });

  it('sends the provider key upstream, never the caller key', async () => {
    five.seen.length = 0;
    await post(gateway, ask('whose key', { provider: { only: ['five'] } }));
    expect(five.seen.map((h) => h.authorization)).toEqual(['Bearer five-key']);
  });

  it('keeps a session on the provider that served it', async () => {
    const first = await post(gateway, { model: 'test/sticky', session_id: 's-1', provider: { order: ['up-b'] }, messages: [{ role: 'user', content: 'a' }] });
    expect(first.json.provider).toBe('up-b');
    const again = await post(gateway, { model: 'test/sticky', messages: [{ role: 'user', content: 'b' }] }, { 'x-session-id': 's-1' });
    expect(again.json.provider).toBe('up-b');
    const other = await post(gateway, { model: 'test/sticky', messages: [{ role: 'user', content: 'c' }] }, { 'x-session-id': 's-2' });
    expect(other.json.provider).toBe('up');
  });

  it('lets an explicit provider.order win over the session\'s provider, as the service does', async () => {
    const stuck = await post(gateway, { model: 'test/sticky', session_id: 's-order', provider: { order: ['up-b'] }, messages: [{ role: 'user', content: 'a' }] });
    expect(stuck.json.provider).toBe('up-b');
    const ordered = await post(gateway, { model: 'test/sticky', session_id: 's-order', provider: { order: ['up'] }, messages: [{ role: 'user', content: 'b' }] });
    expect(ordered.json.provider).toBe('up');
  });

  it('answers embeddings from an upstream, past a failing one, priced and charged', async () => {
    const before = balance();
    const direct = (await (await fetch(`${upstream.apiRoot}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${upstream.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/embed', input: 'a sentence' }) })).json()) as any;
    const res = await fetch(`${gateway.apiRoot}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/embed', input: 'a sentence' }) });
    const via = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect([via.model, via.provider]).toEqual(['test/embed', 'up']);
    expect(via.data[0].embedding).toEqual(direct.data[0].embedding);
    expect(via.usage.cost).toBeCloseTo(via.usage.prompt_tokens * 0.0001, 10);
    expect(before - balance()).toBeCloseTo(via.usage.cost, 10);
  });

  it('keeps the fake models, and lists the upstream ones beside them', async () => {
    const local = await post(gateway, { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
    expect([local.status, local.json.provider]).toEqual([200, 'local-alpha']);
    const list = (await (await fetch(`${gateway.apiRoot}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    const ids = list.data.map((m: any) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['local/echo', 'test/chat', 'test/late']));
  });
});

describe('a providers file with local_models: false', () => {
  it('serves and lists only its upstream models', async () => {
    const config = parseProviders(`local_models: false\nproviders:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/chat: local/echo } }\n`, { UP_KEY: upstream.store.firstKeys().apiKey });
    const only = await startEmulator({ stateDir: join(dir, 'only-upstream'), port: 0, gateway: { config } });
    try {
      const k = only.store.firstKeys().apiKey;
      expect((await post(only, ask('hi'), {}, k)).json.provider).toBe('up');
      const local = await post(only, { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, {}, k);
      expect([local.status, local.json.error.message]).toEqual([400, 'local/echo is not a valid model ID']);
      const none = await post(only, { messages: [{ role: 'user', content: 'hi' }] }, {}, k);
      // Before: a bare "model is required", naming no model the gateway serves.
      expect([none.status, none.json.error.message]).toEqual([400, 'model is required: this gateway has no default model (local_models: false); name one, such as test/chat (GET /v1/models lists them)']);
      const list = (await (await fetch(`${only.apiRoot}/v1/models`, { headers: { authorization: `Bearer ${k}` } })).json()) as any;
      expect(list.data.map((m: any) => m.id)).toEqual(['test/chat']);
    } finally {
      await only.close();
    }
  });
});
