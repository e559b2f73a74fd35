import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { failing, localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { call, emulatorFolder } from '../support/emulator-folder.js';

// What a failed gateway request says, over real HTTP to an in-process `router serve`: a provider refusing its key
// points at api_key_env, a 502 of all candidates failed carries the attempts, provider.only's unknown slug is named.
const folder = emulatorFolder('router-gateway-refusal-words-');
let refusing: LocalUpstream;
let forbidding: LocalUpstream;
let down: LocalUpstream;
let fastapi: LocalUpstream;
let odd: LocalUpstream;
let gateway: Emulator;

beforeAll(async () => {
  [refusing, forbidding, down] = await Promise.all([failing(401), failing(403), failing(503)]);
  // A Python server's validation error (FastAPI's `detail`), and a refusal in a shape no server named here uses.
  fastapi = await localUpstream((_req, res) => {
    res.writeHead(422, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ detail: [{ loc: ['body', 'messages', 0, 'role'], msg: 'field required', type: 'value_error.missing' }] }));
  });
  odd = await localUpstream((_req, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ errors: [{ reason: 'temperature out of range' }] }));
  });
  const yaml = [
    'providers:',
    `  - { name: nokey, base_url: "${refusing.baseUrl}", models: { test/a: m }, embedding_models: { test/e: e } }`,
    `  - { name: badkey, base_url: "${forbidding.baseUrl}", api_key_env: UP_KEY, models: { test/b: m } }`,
    `  - { name: unset, base_url: "${refusing.baseUrl}", api_key_env: UNSET_KEY, models: { test/c: m } }`,
    `  - { name: busy, base_url: "${down.baseUrl}", models: { test/a: m, test/b: m } }`,
    `  - { name: fastapi, base_url: "${fastapi.baseUrl}", models: { test/f: m } }`,
    `  - { name: odd, base_url: "${odd.baseUrl}", models: { test/o: m } }`,
    '',
  ].join('\n');
  gateway = await folder.start('words', { gateway: { config: parseProviders(yaml, { UP_KEY: 'sk-up-0123456789abcdef' }, { warn: () => {} }) } });
});
afterAll(async () => {
  await Promise.all([refusing, forbidding, down, fastapi, odd].map((u) => u?.close()));
});

async function chat(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }) });
  return { status: res.status, body: await res.json() };
}

describe('a provider refusing the key it was sent (401, 403)', () => {
  it('says to name its key with api_key_env, or that the variable named is unset, or to check it', async () => {
    const a = await chat({ model: 'test/a', provider: { only: ['nokey'] } });
    expect(a.status).toBe(502);
    expect(a.body.error.message).toMatch(/nokey: HTTP 401 .*: it was sent no key: name the variable that holds its key with api_key_env in the providers file/);
    const b = await chat({ model: 'test/b', provider: { only: ['badkey'] } });
    expect(b.body.error.message).toMatch(/badkey: HTTP 403 .*: is UP_KEY \(its api_key_env\) a key this provider takes\?/);
    expect(JSON.stringify(b.body)).not.toContain('sk-up-0123456789abcdef');
    const c = await chat({ model: 'test/c' });
    expect(c.body.error.message).toMatch(/unset: HTTP 401 .*: it was sent no key: UNSET_KEY \(its api_key_env\) is not set/);
    const e = await call(gateway, '/v1/embeddings', { model: 'test/e', input: 'x' });
    expect(e.status).toBe(502);
    expect(e.body.error.message).toMatch(/nokey: HTTP 401 .*api_key_env/);
  });

  it('a 503 gets no such words', async () => {
    const got = await chat({ model: 'test/a', provider: { only: ['busy'] } });
    expect(got.status).toBe(502);
    expect(got.body.error.message).not.toContain('api_key_env');
  });
});

describe("a provider's refusal relayed to the caller (a 4xx the request itself caused)", () => {
  it("keeps the provider's words in any shape: FastAPI's detail list, else its JSON, not a bare status", async () => {
    // Before: "fastapi: HTTP 422" and "odd: HTTP 400", the reason lost.
    const f = await chat({ model: 'test/f' });
    expect([f.status, f.body.error.message]).toEqual([422, 'fastapi: body.messages.0.role: field required']);
    const o = await chat({ model: 'test/o' });
    expect([o.status, o.body.error.message]).toEqual([400, 'odd: HTTP 400 {"errors":[{"reason":"temperature out of range"}]}']);
  });
});

describe('a 502 when every candidate failed, to a caller that asked for router_metadata', () => {
  it('carries the attempts, each with its error', async () => {
    const got = await chat({ model: 'test/a' }, { 'x-router-metadata': 'enabled' });
    expect(got.status).toBe(502);
    const meta = got.body.router_metadata;
    expect(meta.attempts).toEqual([
      { provider: 'nokey', model: 'test/a', ok: false, error: expect.stringMatching(/^nokey: HTTP 401/) },
      { provider: 'busy', model: 'test/a', ok: false, error: expect.stringMatching(/^busy: HTTP 503/) },
    ]);
    expect(meta).toMatchObject({ attempt: 2, requested: 'test/a', strategy: 'fallback' });
    expect(meta.summary).toMatch(/^chat: test\/a -> every candidate failed: nokey \(nokey: HTTP 401/);
    const plain = await chat({ model: 'test/a' });
    expect(plain.body.router_metadata).toBeUndefined();
  });
});

describe('provider.only naming a slug no provider here has', () => {
  it('a 404 naming it and who serves the model', async () => {
    const got = await chat({ model: 'test/a', provider: { only: ['nokye'] } });
    expect(got.status).toBe(404);
    expect(got.body.error.message).toBe('No endpoints found matching your provider preferences: provider.only names nokye, which serves none of the models asked (test/a: served here by nokey, busy)');
    const ignored = await chat({ model: 'test/a', provider: { ignore: ['nokey', 'busy'] } });
    expect(ignored.body.error.message).toBe('No endpoints found matching your provider preferences: test/a: served here by nokey, busy');
  });
});
