import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { workspaceUuid } from '../../src/emulator/state/workspace-id.js';

// What clients we did not write ask of `router serve` as a gateway: the current @openrouter/sdk's
// strict key parse, Responses for a model whose provider has none, Retry-After in both its forms,
// a gzip-encoded body, a browser's CORS preflight. Each over real HTTP.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let key: string;
const locals: LocalUpstream[] = [];

/** An HTTP date `seconds` from now (Retry-After's other form). */
const dateIn = (seconds: number) => new Date(Date.now() + seconds * 1000).toUTCString();
const FAR = dateIn(7200);
const NEAR = dateIn(60);

const refusing = (status: number, wait?: string) => (_req: unknown, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json', ...(wait ? { 'retry-after': wait } : {}) });
  res.end(`{"error":{"code":${status},"message":"busy"}}`);
};

const ANSWERS = {
  'down-9': refusing(503, '9'),
  'rate-7': refusing(429, '7'),
  'rate-hour': refusing(429, '3600'),
  'rate-far': refusing(429, FAR),
  'rate-near': refusing(429, NEAR),
  'rate-junk': refusing(429, 'soon'),
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-foreign-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const entries: string[] = [];
  for (const [name, answer] of Object.entries(ANSWERS)) {
    const l = await localUpstream((req, res) => answer(req, res));
    locals.push(l);
    entries.push(`  - { name: "${name}", base_url: "${l.baseUrl}", models: { test/busy: x } }`);
  }
  // `chat-only` has no `responses: true`: its model is served for chat, never for Responses.
  const up = `  - { name: chat-only, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/echo } }`;
  const config = parseProviders(`providers:\n${entries.join('\n')}\n${up}\n`, { UP_KEY: upstream.store.firstKeys().apiKey });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, flavor: 'deployed', gateway: { config } });
  key = gateway.store.firstKeys().apiKey;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  for (const l of locals) await l.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const busy = (order: string[]) => post('/v1/chat/completions', { model: 'test/busy', provider: { only: order, order }, messages: [{ role: 'user', content: 'hi' }] });

describe('the current @openrouter/sdk', () => {
  it("parses GET /key, with the fields it requires that the emulator answers honestly", async () => {
    const { OpenRouter } = await import('@openrouter/sdk');
    const sdk = new OpenRouter({ apiKey: key, serverURL: `${gateway.apiRoot}/v1` });
    const { data } = await sdk.apiKeys.getCurrentKeyMetadata();
    expect(data.allowedDataRegions).toEqual(['global']);
    // The emulator counts no :free requests; the limit is the real service's tier for the credits:
    // 50 a day below 10 credits (a new workspace has 5), 1000 from 10 on.
    expect(data.freeModelDailyRequests).toEqual({ limit: 50, remaining: 50, used: 0 });
    expect(data.organizationId).toBeNull();
    expect(data.workspaceId).toBe(workspaceUuid(gateway.store.findKey(key)!.workspace));
    expect(data.isManagementKey).toBe(false);
    const topUp = await post('/_emulator/credits', { amount: 10 }, { authorization: `Bearer ${gateway.store.firstKeys().managementKey}` });
    expect(topUp.status).toBe(200);
    await topUp.text();
    expect((await sdk.apiKeys.getCurrentKeyMetadata()).data.freeModelDailyRequests.limit).toBe(1000);
  });
});

describe('Responses for a model whose providers have no Responses API', () => {
  it('is a 400 that says so, not "not a valid model ID"; chat with it still answers', async () => {
    const res = await post('/v1/responses', { model: 'test/m', input: 'hello' });
    expect(res.status).toBe(400);
    const message = ((await res.json()) as { error: { message: string } }).error.message;
    expect(message).toBe('test/m is served only by providers without the Responses API (none of them has responses: true); use /v1/chat/completions');
    const chat = await post('/v1/chat/completions', { model: 'test/m', messages: [{ role: 'user', content: 'hello' }] });
    expect(chat.status).toBe(200);
    expect(((await chat.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('hello');
  });
});

describe('Retry-After when every provider failed', () => {
  it("an upstream 503's Retry-After comes back on the 502", async () => {
    const res = await busy(['down-9']);
    expect(res.status).toBe(502);
    expect(res.headers.get('retry-after')).toBe('9');
    await res.text();
  });

  it('seconds and HTTP dates are compared: the soonest wins, in its own form', async () => {
    const date = await busy(['rate-hour', 'rate-near']);
    expect(date.status).toBe(429);
    expect(date.headers.get('retry-after')).toBe(NEAR);
    await date.text();
    const seconds = await busy(['rate-far', 'rate-7']);
    expect(seconds.headers.get('retry-after')).toBe('7');
    await seconds.text();
    const mixed = await busy(['rate-far', 'down-9']);
    expect([mixed.status, mixed.headers.get('retry-after')]).toEqual([502, '9']);
    await mixed.text();
  });

  it('a wait that does not parse leaves the answer without one', async () => {
    const res = await busy(['rate-7', 'rate-junk']);
    expect([res.status, res.headers.get('retry-after')]).toEqual([429, null]);
    await res.text();
  });
});

describe('request bodies and browsers', () => {
  it('a gzip-encoded body is a 415 naming the encoding, not "not valid JSON"', async () => {
    const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] })),
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('accept-encoding')).toBe('identity');
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('request bodies with Content-Encoding gzip are not accepted; send the body uncompressed');
    // The refused request is in its workspace's request log, as any other refusal of a key's request.
    const log = await fetch(`${gateway.apiRoot}/_emulator/requests`, { headers: { authorization: `Bearer ${gateway.store.firstKeys().managementKey}` } });
    const entries = ((await log.json()) as { data: { headers: Record<string, string> }[] }).data;
    expect(entries.some((e) => e.headers['content-encoding'] === 'gzip')).toBe(true);
  });

  it("answers a browser's preflight, and the answer that follows carries the origin", async () => {
    const origin = 'http://localhost:5173';
    const asked = 'authorization, content-type, x-session-id, x-stainless-os';
    const pre = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': asked } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    expect(pre.headers.get('access-control-allow-headers')).toBe(asked);
    const res = await post('/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }, { origin });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('x-request-id');
    await res.text();
    const streamed = await post('/v1/chat/completions', { model: 'local/echo', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { origin });
    expect([streamed.headers.get('content-type'), streamed.headers.get('access-control-allow-origin')]).toEqual(['text/event-stream', '*']);
    await streamed.text();
    const refused = await fetch(`${gateway.apiRoot}/v1/key`, { headers: { origin } });
    expect([refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([401, '*']);
    await refused.text();
  });
});
