import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { deadPort, failing, localUpstream, stall, testGateway, type LocalUpstream } from '../support/upstreams.js';

// Responses and speech fall back at run time as chat does: past a dead, a slow, a 5xx and a provider that
// breaks before its first output (or byte of audio), to another `router serve` spoken to only as an
// OpenAI-compatible upstream, and on to the fake models when the request's `models` names one; each
// attempt told by the routing metadata (speech's in response headers), only the one that answered charged.
let chain: GatewayChain;
let upstream: Emulator;
let gateway: Emulator;
let key: string;
let locals: LocalUpstream[];

const input = 'the tide comes in, the tide goes out';
const FAILING = ['dead', 'slow', 'five', 'early'];

beforeAll(async () => {
  const five = await failing(503);
  const slow = await stall();
  // Breaks before anything of an answer: a Responses stream after `response.created`, speech after its head.
  const early = await localUpstream((req, res) => {
    if (req.url?.endsWith('/audio/speech')) {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.flushHeaders();
    } else {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'resp_x', object: 'response', model: 'm', status: 'in_progress', output: [] } })}\n\n`);
    }
    setTimeout(() => res.destroy(), 20);
  });
  locals = [five, slow, early];
  const both = 'models: { test/resp: local/echo }, speech_models: { test/tts: local/tts }';
  const dead = await deadPort();
  const yaml = (upstreamRoot: string) => `
providers:
  - { name: dead, responses: true, base_url: "http://127.0.0.1:${dead}/v1", ${both} }
  - { name: slow, responses: true, base_url: "${slow.baseUrl}", timeout_ms: 300, ${both} }
  - { name: five, responses: true, base_url: "${five.baseUrl}", ${both} }
  - { name: early, responses: true, base_url: "${early.baseUrl}", ${both} }
  - name: up
    responses: true
    base_url: ${upstreamRoot}/v1
    api_key_env: UP_KEY
    models: { test/resp: local/echo }
    speech_models: { test/tts: local/tts }
    prices: { test/resp: { prompt: 0.001, completion: 0.002 }, test/tts: { prompt: 0.001 } }
`;
  chain = await startGatewayChain('gateway-fallback-routes', yaml, { keys: 'managementKey', locals });
  ({ upstream, gateway, key } = chain);
});

afterAll(() => chain?.close());

const optIn = { 'x-router-metadata': 'enabled' };
const call = (e: Emulator, path: string, body: unknown, k = key, headers: Record<string, string> = optIn) =>
  fetch(`${e.apiRoot}/v1/${path}`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const balance = () => gateway.store.balance(gateway.store.findKey(key)!.workspace);
const upKey = () => chain.upKey;
/** Each event of a Responses stream: its data. */
const events = (sse: string) =>
  sse
    .split('\n\n')
    .filter((e) => e.includes('data: '))
    .map((e) => JSON.parse(/^data: (.*)$/m.exec(e)![1]!) as any);
type Meta = { attempt: number; strategy: string; summary: string; attempts: { provider: string; model: string; ok: boolean; error?: string }[] };
const tried = (meta: Meta) => meta.attempts.map((a) => `${a.provider}${a.ok ? '' : ' x'}`);
const passedOver = FAILING.map((p) => `${p} x`);

describe('Responses fall back at run time', () => {
  it('past a dead, a slow, a 5xx and an early-breaking provider to another router serve, whole and streamed, charged for that answer only', async () => {
    const expected = ((await (await call(upstream, 'responses', { model: 'local/echo', input }, upKey())).json()) as any).output_text;
    for (const stream of [false, true]) {
      const before = balance();
      const res = await call(gateway, 'responses', { model: 'test/resp', input, stream });
      expect(res.status).toBe(200);
      const text = await res.text();
      const final = stream ? events(text).at(-1)!.response : JSON.parse(text);
      if (stream) expect(events(text).at(-1)!.type).toBe('response.completed');
      expect([final.model, final.output_text]).toEqual(['test/resp', expected]);
      const meta = final.router_metadata as Meta;
      expect([meta.attempt, meta.strategy, tried(meta)]).toEqual([5, 'fallback', [...passedOver, 'up']]);
      expect(meta.attempts[1]!.error).toBe("slow: timed out: no answer's head within timeout_ms (300 ms)");
      const cost = final.usage.input_tokens * 0.001 + final.usage.output_tokens * 0.002;
      expect(final.usage.cost).toBeCloseTo(cost, 10);
      expect(before - balance()).toBeCloseTo(cost, 10);
    }
  });

  it("on to a fake model the request's models names, whole and streamed, charged the fake model's cost only", async () => {
    const direct = (await (await call(upstream, 'responses', { model: 'local/echo', input }, upKey())).json()) as any;
    for (const stream of [false, true]) {
      const before = balance();
      const res = await call(gateway, 'responses', { model: 'test/resp', models: ['local/echo'], input, stream, provider: { ignore: ['up'] } });
      expect(res.status).toBe(200);
      const text = await res.text();
      const final = stream ? events(text).at(-1)!.response : JSON.parse(text);
      expect([final.model, final.status, final.output_text]).toEqual(['local/echo', 'completed', direct.output_text]);
      const meta = final.router_metadata as Meta;
      expect([meta.attempt, meta.strategy, tried(meta)]).toEqual([5, 'fallback', [...passedOver, 'local-alpha']]);
      expect(meta.summary).toMatch(/^responses: test\/resp -> local\/echo via local-alpha \(attempt 5\); failed: dead /);
      expect(final.usage.cost).toBeCloseTo(direct.usage.cost, 10);
      expect(before - balance()).toBeCloseTo(direct.usage.cost, 10);
      if (stream) {
        const deltas = events(text).filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
        expect(deltas).toBe(direct.output_text);
      }
      const gen = gateway.store.generation(final.id)!.data;
      expect([gen.model, gen.provider_name]).toEqual(['local/echo', 'local-alpha']);
    }
  });

  it('asks a fake model named first before the upstream one after it (it was skipped, unseen)', async () => {
    const res = await call(gateway, 'responses', { model: 'local/echo', models: ['test/resp'], input });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as any;
    expect([answer.model, answer.router_metadata.attempt, tried(answer.router_metadata)]).toEqual(['local/echo', 1, ['local-alpha']]);
  });

  it('never asks the fake models when the providers file turns them off', async () => {
    const off = await testGateway(`local_models: false\nproviders:\n  - { name: five, responses: true, base_url: "${locals[0]!.baseUrl}", models: { test/resp: m }, speech_models: { test/tts: t } }\n`, 'fallback-off');
    try {
      const k = off.gateway.store.firstKeys().managementKey;
      for (const [path, body] of [['responses', { model: 'test/resp', models: ['local/echo'], input }], ['audio/speech', { model: 'test/tts', models: ['local/tts'], input, voice: 'alloy' }]] as const) {
        const res = await call(off.gateway, path, body, k);
        expect(res.status).toBe(502);
        const answer = (await res.json()) as any;
        expect(answer.error.message).toMatch(/^All providers .*: five: HTTP 503 .*; passed over, no provider asked: local\/(echo|tts) is not a valid model ID$/);
        expect(tried(answer.router_metadata)).toEqual(['five x']);
        expect(answer.router_metadata.passed_over).toEqual([{ provider: 'none', model: body.models[0], reason: `${body.models[0]} is not a valid model ID`, status: 400 }]);
      }
    } finally {
      await off.close();
    }
  });

  it('takes provider.order, provider.only and provider.ignore', async () => {
    const metaOf = async (provider: unknown) => {
      const res = await call(gateway, 'responses', { model: 'test/resp', input, provider });
      expect(res.status).toBe(200);
      return ((await res.json()) as any).router_metadata as Meta;
    };
    expect(tried(await metaOf({ order: ['up', 'dead'] }))).toEqual(['up']);
    expect(tried(await metaOf({ only: ['five', 'up'] }))).toEqual(['five x', 'up']);
    expect(tried(await metaOf({ ignore: ['dead', 'slow', 'early'] }))).toEqual(['five x', 'up']);
    const none = await call(gateway, 'responses', { model: 'test/resp', input, provider: { only: ['dead', 'five'] } });
    expect(none.status).toBe(502);
    expect(tried(((await none.json()) as any).router_metadata)).toEqual(['dead x', 'five x']);
  });
});

describe('speech falls back at run time', () => {
  it('past a dead, a slow, a 5xx and a provider that ends before its first byte to another router serve, charged for that answer only', async () => {
    const direct = await call(upstream, 'audio/speech', { model: 'local/tts', input, voice: 'alloy' }, upKey());
    const expected = Buffer.from(await direct.arrayBuffer());
    const before = balance();
    const res = await call(gateway, 'audio/speech', { model: 'test/tts', input, voice: 'alloy' });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);
    const meta = JSON.parse(res.headers.get('x-router-metadata')!) as Meta;
    expect([meta.attempt, meta.strategy, tried(meta)]).toEqual([5, 'fallback', [...passedOver, 'up']]);
    // A page's script may read it (CORS shows a script only the headers listed).
    expect(res.headers.get('access-control-expose-headers')).toMatch(/\bx-router-metadata\b.*\bx-openrouter-metadata\b/);
    expect(meta.summary).toMatch(/^speech: test\/tts -> test\/tts via up \(attempt 5\)/);
    expect(before - balance()).toBeCloseTo(input.length * 0.001, 10);
    // Not asked for, not there.
    const plain = await call(gateway, 'audio/speech', { model: 'test/tts', input, voice: 'alloy', provider: { only: ['up'] } }, key, {});
    await plain.arrayBuffer();
    expect(plain.headers.get('x-router-metadata')).toBeNull();
  });

  it("on to a fake speech model the request's models names: its audio, charged at its price only", async () => {
    const direct = await call(upstream, 'audio/speech', { model: 'local/tts', input, voice: 'alloy' }, upKey());
    const expected = Buffer.from(await direct.arrayBuffer());
    const before = balance();
    const res = await call(gateway, 'audio/speech', { model: 'test/tts', models: ['local/tts'], input, voice: 'alloy', provider: { ignore: ['up'] } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);
    const meta = JSON.parse(res.headers.get('x-router-metadata')!) as Meta;
    expect([meta.attempt, tried(meta)]).toEqual([5, [...passedOver, 'local-alpha']]);
    expect(before - balance()).toBeCloseTo(input.length * 1.5e-5, 10);
    const gen = gateway.store.generation(res.headers.get('x-generation-id')!)!.data;
    expect([gen.model, gen.provider_name]).toEqual(['local/tts', 'local-alpha']);
  });

  it('takes provider.order, provider.only and provider.ignore; a 502 carries the metadata in its body', async () => {
    const metaOf = async (provider: unknown) => {
      const before = balance();
      const res = await call(gateway, 'audio/speech', { model: 'test/tts', input, voice: 'alloy', provider });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      expect(before - balance()).toBeCloseTo(input.length * 0.001, 10);
      return JSON.parse(res.headers.get('x-router-metadata')!) as Meta;
    };
    expect(tried(await metaOf({ order: ['up', 'dead'] }))).toEqual(['up']);
    expect(tried(await metaOf({ only: ['early', 'up'] }))).toEqual(['early x', 'up']);
    expect(tried(await metaOf({ ignore: ['dead', 'slow', 'early'] }))).toEqual(['five x', 'up']);
    const before = balance();
    const none = await call(gateway, 'audio/speech', { model: 'test/tts', input, voice: 'alloy', provider: { only: ['dead', 'five'] } });
    expect(none.status).toBe(502);
    expect(tried(((await none.json()) as any).router_metadata)).toEqual(['dead x', 'five x']);
    expect(balance()).toBe(before);
  });

  it('says the metadata in ASCII headers, both shapes, whatever the words of the provider passed over', async () => {
    const busy = await localUpstream((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 503, message: 'überlastet — später' } }));
    });
    const gw = await testGateway(`providers:\n  - { name: busy, base_url: "${busy.baseUrl}", speech_models: { test/tts: t } }\n`, 'fallback-words');
    try {
      const res = await call(gw.gateway, 'audio/speech', { model: 'test/tts', models: ['local/tts'], input, voice: 'alloy' }, gw.gateway.store.firstKeys().managementKey, { 'x-router-metadata': 'enabled', 'x-openrouter-metadata': 'enabled' });
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
      const raw = res.headers.get('x-router-metadata')!;
      expect(raw).toMatch(/^[\x20-\x7e]+$/);
      const meta = JSON.parse(raw) as Meta;
      expect(tried(meta)).toEqual(['busy x', 'local-alpha']);
      expect(meta.attempts[0]!.error).toContain('überlastet — später');
      const openrouter = JSON.parse(res.headers.get('x-openrouter-metadata')!) as { attempts: unknown[] };
      expect(openrouter.attempts).toEqual([{ provider: 'busy', model: 'test/tts', status: 503 }, { provider: 'local-alpha', model: 'local/tts', status: 200 }]);
    } finally {
      await gw.close();
      await busy.close();
    }
  });

  it("the emulator's own speech route says its routing in the same header", async () => {
    const res = await call(upstream, 'audio/speech', { model: 'local/tts', input, voice: 'alloy' }, upKey());
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const meta = JSON.parse(res.headers.get('x-router-metadata')!) as Meta;
    expect([meta.attempt, meta.strategy, meta.summary]).toEqual([1, 'direct', 'speech: local/tts -> local/tts via local-alpha (attempt 1)']);
  });
});
