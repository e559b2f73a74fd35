import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { waitBound } from '../support/until.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { deadPort } from '../support/upstreams.js';
import { runCliInProcess } from '../support/cli-env.js';

// A gateway whose every provider of a model fails answers a 502 that carries `router_metadata` (asked with
// --router-metadata): which providers were tried and why each failed. The CLI printed only the error line;
// now chat, responses, embed and speak say each attempt on stderr, one line each. Embeddings walk `models`
// as chat does (the fake embedding models among them): before, a request was the gateway's only when its
// first model was an upstream's, and a fake model after an upstream's was "not a valid model ID".
// The providers: a closed port, and another `router serve` given a key it refuses (401).
let chain: GatewayChain;
let env: Record<string, string>;

beforeAll(async () => {
  const dead = await deadPort();
  const all = 'models: { test/m: local/echo }, embedding_models: { test/e: local/embed }, speech_models: { test/tts: local/tts }';
  chain = await startGatewayChain('gateway-failed-attempts', (root) => `
providers:
  - { name: dead, base_url: "http://127.0.0.1:${dead}/v1", api_key_env: UP_KEY, responses: true, ${all} }
  - { name: refused, base_url: "${root}/v1", api_key_env: WRONG, responses: true, ${all} }
  - { name: up, base_url: "${root}/v1", api_key_env: UP_KEY, embedding_models: { test/good: local/embed } }
  - { name: chatonly, base_url: "${root}/v1", api_key_env: UP_KEY, models: { test/chat: local/echo } }
`, { keys: 'managementKey', env: { WRONG: 'sk-wrong-key-for-this-upstream-0123456789' } });
  const { apiKey, managementKey } = chain.gateway.store.firstKeys();
  env = { ROUTER_API_ROOT: chain.gateway.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: managementKey, ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '', ROUTER_CONFIG_DIR: join(chain.dir, 'config'), ROUTER_STATE_DIR: join(chain.dir, 'state') };
});

afterAll(() => chain?.close());

const router = (...args: string[]) => runCliInProcess([...args, '--max-retries', '0'], { env });
const refusedWhy = 'refused: HTTP 401 {"error":{"code":401,"message":"Invalid API key","metadata":{"error_type":"authentication"}}}: is WRONG (its api_key_env) a key this provider takes?';
const attemptLines = (model: string) => [
  `router: attempt 1: ${model} via dead failed: dead: connection refused (ECONNREFUSED)`,
  `router: attempt 2: ${model} via refused failed: ${refusedWhy}`,
];
const noted = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('router: attempt'));

describe('a failed gateway request asked with --router-metadata', () => {
  it.each([
    ['chat', ['chat', 'hi', '-m', 'test/m'], 'test/m'],
    ['chat --no-stream', ['chat', 'hi', '-m', 'test/m', '--no-stream'], 'test/m'],
    ['responses', ['responses', 'hi', '-m', 'test/m'], 'test/m'],
    ['embed', ['embed', 'hi', '-m', 'test/e'], 'test/e'],
    ['speak', ['speak', 'hi', '-m', 'test/tts', '--voice', 'alloy', '-o', 'out.mp3'], 'test/tts'],
  ])('%s says each provider tried and why it failed, one line each', async (_name, args, model) => {
    const out = args.map((a) => (a === 'out.mp3' ? join(chain.dir, 'out.mp3') : a));
    const r = await router(...out, '--router-metadata');
    expect(r.code, r.stderr).toBe(7);
    // Said once: the error line names the failure, the attempts' words are in their lines (before: in both).
    expect(r.stderr.split('\n')[0]).toMatch(/^error: .*502 Bad Gateway: All providers for the requested models are unavailable \(2 attempts below\)$/);
    expect(noted(r.stderr)).toEqual(attemptLines(model));
    for (const why of ['connection refused', 'Invalid API key']) expect(r.stderr.split(why).length - 1, why).toBe(1);
    expect(r.stdout).toBe('');
    // Not asked: the error line alone, as before.
    const plain = await router(...out);
    expect([plain.code, noted(plain.stderr)]).toEqual([7, []]);
    expect(plain.stderr).toContain(`unavailable: dead: connection refused (ECONNREFUSED); ${refusedWhy}`);
  });

  it('names an id of the list that names no model, and the fallback that answered, for embeddings', async () => {
    const r = await router('embed', 'hi', '-m', 'nosuch/model', '--models', 'test/e,test/good', '--dimensions', '2', '--router-metadata');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('router: attempts: test/e via dead (502), test/e via refused (401), test/good via up (200)\nrouter: passed over, not asked: nosuch/model via none (400)\n');
    const answer = JSON.parse(r.stdout) as { model: string; provider: string; data: unknown[] };
    expect([answer.model, answer.provider, answer.data.length]).toEqual(['test/good', 'up', 1]);
  });
});

describe('embeddings through the gateway walk model, then models', () => {
  const embed = async (body: Record<string, unknown>) => {
    const res = await fetch(`${chain.gateway.apiRoot}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${chain.key}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify({ input: 'hi', dimensions: 2, ...body }) });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('to an upstream model after one that names no model here (before: a 400 of the first)', async () => {
    const got = await embed({ model: 'nosuch/model', models: ['test/good'] });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect([got.body.model, got.body.provider]).toEqual(['test/good', 'up']);
    expect(got.body.router_metadata.attempts).toEqual([{ provider: 'up', model: 'test/good', ok: true }]);
    expect(got.body.router_metadata.passed_over).toEqual([{ provider: 'none', model: 'nosuch/model', reason: 'nosuch/model is not a valid model ID', status: 400 }]);
  });

  it('to a fake embedding model after upstreams that failed (before: a 502 naming it not a valid model ID)', async () => {
    const got = await embed({ model: 'test/e', models: ['local/embed'] });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect([got.body.model, got.body.provider, got.body.data[0].embedding.length]).toEqual(['local/embed', 'local-alpha', 2]);
    expect(got.body.router_metadata.attempts.map((a: { provider: string }) => a.provider)).toEqual(['dead', 'refused', 'local-alpha']);
  });

  it('to an upstream model after a fake one that its provider preferences rule out', async () => {
    const got = await embed({ model: 'local/embed', models: ['test/good'], provider: { only: ['up'] } });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect([got.body.model, got.body.provider]).toEqual(['test/good', 'up']);
  });
});

// The 502's words listed the ids no provider was asked for (an unknown id; for Responses, a chat-only model)
// first, as if they were attempts: now the providers asked come first, what each said, then those passed over, said as such.
describe("a gateway 502's message", () => {
  const ask = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${chain.gateway.apiRoot}/v1/${path}`, { method: 'POST', headers: { authorization: `Bearer ${chain.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, message: ((await res.json()) as { error: { message: string } }).error.message };
  };
  const asked = `dead: connection refused (ECONNREFUSED); ${refusedWhy}`;

  it('names the providers asked first, then the ids passed over (Responses)', async () => {
    expect(await ask('responses', { model: 'test/chat', models: ['nosuch/model', 'test/m'], input: 'hi' })).toEqual({
      status: 502,
      message: `All providers for the requested models are unavailable: ${asked}; passed over, no provider asked: nosuch/model is not a valid model ID; chatonly: test/chat has no Responses API here (no responses: true); /v1/chat/completions serves it`,
    });
  });

  it('names the providers asked first, then the ids passed over (chat, embeddings)', async () => {
    expect(await ask('chat/completions', { model: 'nosuch/model', models: ['test/m'], messages: [{ role: 'user', content: 'hi' }] })).toEqual({
      status: 502,
      message: `All providers for the requested models are unavailable: ${asked}; passed over, no provider asked: nosuch/model is not a valid model ID`,
    });
    expect(await ask('embeddings', { model: 'nosuch/model', models: ['test/e'], input: 'hi' })).toEqual({
      status: 502,
      message: `All providers for the requested models are unavailable: ${asked}; passed over, no provider asked: nosuch/model is not a valid model ID`,
    });
  });
});

// A batch's Responses request dropped the chat-only models of its chain (and ids naming no model) unsaid: its
// result's error named only the providers asked. Now it names them after those, as a request's 502 does.
describe("a batch's Responses request whose every provider failed", () => {
  it('names the chat-only model it passed over in its result error', async () => {
    const call = async (path: string, body?: unknown) => (await fetch(`${chain.gateway.apiRoot}${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${chain.key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })).json() as Promise<any>;
    const created = await call('/v1/batches', { endpoint: '/v1/responses', model: 'test/m', completion_window: '24h', requests: [{ custom_id: 'r0', body: { models: ['test/chat'], input: 'hi' } }] });
    expect(created.id, JSON.stringify(created)).toMatch(/^batch_/);
    let seen: any;
    await vi.waitFor(async () => {
      seen = await call(`/v1/batches/${created.id}`);
      expect(['completed', 'failed']).toContain(seen.status);
    }, { timeout: waitBound(), interval: 50 });
    const error = seen.results[0].response.body.error.message as string;
    expect(error).toMatch(/^All providers for the requested models are unavailable: dead: .*; refused: .*; passed over, no provider asked: chatonly: test\/chat has no Responses API here \(no responses: true\); \/v1\/chat\/completions serves it$/);
  });
});
