import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';

// An id of `model` / `models` passed over was said as "… is not a valid model ID" whatever it was: an
// embeddings request naming a chat model read as if the id named no model at all (`router embed
// --router-metadata`'s passed-over line, the 400 when none of the list is an embedding model), and a
// request whose list named only an upstream model of another kind never reached the gateway's routing.
// A fake model that is down was passed over unsaid in router serve's own summary. Now each id says
// why, in the words the gateway's chat uses: no model (`not a valid model ID`), a model of another
// kind (named, with the route that serves it), or down (`its provider (id: unavailable)`). Both say an
// id passed over as not asked (routing-metadata-agree.test.ts).
let chain: GatewayChain;
let dir: string;
let emulator: Emulator;

beforeAll(async () => {
  chain = await startGatewayChain('passed-over-kind-words', (root) => `
providers:
  - { name: up, base_url: "${root}/v1", api_key_env: UP_KEY, models: { test/m: local/echo }, embedding_models: { test/e: local/embed }, speech_models: { test/tts: local/tts } }
`, { keys: 'managementKey' });
  dir = mkdtempSync(join(tmpdir(), 'router-passed-over-kind-words-'));
  emulator = await startEmulator({ stateDir: join(dir, 'emulator'), port: 0 });
});

afterAll(async () => {
  await chain?.close();
  await emulator?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ask = async (e: Emulator, key: string, path: string, body: Record<string, unknown>) => {
  const res = await fetch(`${e.apiRoot}/v1/${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify(body) });
  const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
  const json = res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as any) : undefined;
  return { status: res.status, body: json, metadata: JSON.parse(res.headers.get('x-router-metadata') ?? 'null') ?? json?.router_metadata };
};
const gateway = (path: string, body: Record<string, unknown>) => ask(chain.gateway, chain.key, path, body);
const summary = (got: { metadata: { summary: string } }) => got.metadata.summary;
const messages = [{ role: 'user', content: 'hi' }];

describe('the gateway names the kind of a model passed over', () => {
  it('embeddings: a chat model, an unknown id, then the embedding model', async () => {
    const got = await gateway('embeddings', { model: 'test/m', models: ['nosuch/model', 'test/e'], input: 'hi' });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(summary(got)).toBe('embeddings: test/m -> test/e via up (attempt 1); passed over, not asked: none (test/m is a chat model, not an embedding model; /v1/chat/completions serves it), none (nosuch/model is not a valid model ID)');
  });

  it('chat: an embedding model, a fake model that is down, then the chat model', async () => {
    const got = await gateway('chat/completions', { model: 'test/e', models: ['local/unavailable', 'test/m'], messages });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(summary(got)).toBe('chat: test/e -> test/m via up (attempt 2); failed: local-beta (local/unavailable: unavailable); passed over, not asked: none (test/e is an embedding model, not a chat model; /v1/embeddings serves it)');
  });

  it('speech: a chat model, then the fake speech model', async () => {
    const got = await gateway('audio/speech', { model: 'test/m', models: ['local/tts'], input: 'hi', voice: 'alloy' });
    expect(got.status).toBe(200);
    expect(summary(got)).toBe('speech: test/m -> local/tts via local-alpha (attempt 1); passed over, not asked: none (test/m is a chat model, not a speech model; /v1/chat/completions serves it)');
  });

  it('the 400 when no id of the list is a model of the kind asked, upstream or fake (before: "not a valid model ID")', async () => {
    for (const [path, body, message] of [
      ['embeddings', { model: 'test/m', models: ['local/echo'], input: 'hi' }, 'test/m is a chat model, not an embedding model; /v1/chat/completions serves it'],
      ['chat/completions', { model: 'test/e', models: ['local/embed'], messages }, 'test/e is an embedding model, not a chat model; /v1/embeddings serves it'],
      ['responses', { model: 'test/tts', input: 'hi' }, 'test/tts is a speech model, not a chat model; /v1/audio/speech serves it'],
      ['audio/speech', { model: 'test/e', input: 'hi', voice: 'alloy' }, 'test/e is an embedding model, not a speech model; /v1/embeddings serves it'],
    ] as const) {
      const got = await gateway(path, body);
      expect([path, got.status, got.body.error.message]).toEqual([path, 400, message]);
    }
  });
});

describe("router serve's own models say it the same way", () => {
  const own = (path: string, body: Record<string, unknown>) => ask(emulator, emulator.store.firstKeys().managementKey, path, body);

  it('a chat model passed over for embeddings, and the 400 when none is one', async () => {
    const got = await own('embeddings', { model: 'local/echo', models: ['local/embed'], input: 'hi' });
    expect(summary(got)).toBe('embeddings: local/echo -> local/embed via local-alpha (attempt 1); passed over, not asked: none (local/echo is a chat model, not an embedding model; /v1/chat/completions serves it)');
    const none = await own('embeddings', { model: 'local/echo', input: 'hi' });
    expect([none.status, none.body.error.message]).toEqual([400, 'local/echo is a chat model, not an embedding model; /v1/chat/completions serves it']);
  });

  it('a model that is down, named with its provider (before: passed over unsaid)', async () => {
    const got = await own('chat/completions', { model: 'local/unavailable', models: ['nosuch/model', 'local/echo'], messages });
    expect(summary(got)).toBe('chat: local/unavailable -> local/echo via local-alpha (attempt 2); failed: local-beta (local/unavailable: unavailable); passed over, not asked: none (nosuch/model is not a valid model ID)');
  });
});
