import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// A Responses request whose `models` list names a model only providers without the Responses API
// serve (no `responses: true`): the spec's `models` is "used for fallback", so such a model is passed
// over as a failed one is, and router_metadata names it. Before, it was dropped unseen when another
// model of the list had the API, and the request was a 400 when the first model was such a one, though a
// later one (a fake model) would answer. Alone, or with nothing else to answer, it is still the 400 that
// says to use chat. An id the chain names after the model that answered was never reached: not named.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-resp-chat-only-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const yaml = `
providers:
  - { name: chatonly, base_url: "${upstream.apiRoot}/v1", api_key_env: UP, models: { test/chat: local/echo } }
  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP, responses: true, models: { test/resp: local/echo } }
`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP: upstream.store.firstKeys().apiKey }) } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function ask(path: string, body: Record<string, unknown>): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, body: body.stream ? undefined : JSON.parse(text) };
}

const passedOver = { provider: 'chatonly', model: 'test/chat', reason: 'chatonly: test/chat has no Responses API here (no responses: true); /v1/chat/completions serves it', status: 400 };

describe('a Responses request whose models list names a chat-only model', () => {
  it('passes over it for the next model, named in router_metadata, whole and streamed', async () => {
    const whole = await ask('/v1/responses', { model: 'test/chat', models: ['test/resp'], input: 'hi' });
    expect(whole.status, whole.text).toBe(200);
    expect(whole.body.model).toBe('test/resp');
    // Never asked: passed over, not an attempt; the fallback model answered at the first provider asked.
    expect(whole.body.router_metadata).toMatchObject({ requested: 'test/chat', attempt: 1, strategy: 'fallback' });
    expect(whole.body.router_metadata.attempts).toEqual([{ provider: 'up', model: 'test/resp', ok: true }]);
    expect(whole.body.router_metadata.passed_over).toEqual([passedOver]);

    const streamed = await ask('/v1/responses', { model: 'test/chat', models: ['test/resp'], input: 'hi', stream: true });
    expect(streamed.status).toBe(200);
    const completed = streamed.text.split('\n\n').find((e) => e.startsWith('event: response.completed\n'))!;
    expect(JSON.parse(completed.slice(completed.indexOf('data: ') + 6)).response.router_metadata.passed_over).toEqual([passedOver]);
  });

  it('falls back to a fake model after it (before: the 400 of the first)', async () => {
    const got = await ask('/v1/responses', { model: 'test/chat', models: ['local/echo'], input: 'hi' });
    expect(got.status, got.text).toBe(200);
    expect(got.body.model).toBe('local/echo');
    expect(got.body.router_metadata.attempts).toEqual([{ provider: 'local-alpha', model: 'local/echo', ok: true }]);
    expect(got.body.router_metadata.passed_over).toEqual([passedOver]);
  });

  it('is still the 400 that names chat when nothing else in the list answers Responses', async () => {
    for (const body of [{ model: 'test/chat' }, { model: 'test/chat', models: ['nosuch/model'] }]) {
      const got = await ask('/v1/responses', { ...body, input: 'hi' });
      expect([got.status, got.body.error.message]).toEqual([400, 'test/chat is served only by providers without the Responses API (none of them has responses: true); use /v1/chat/completions']);
    }
    // Chat answers it.
    expect((await ask('/v1/chat/completions', { model: 'test/chat', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
  });
});

describe('router_metadata of a gateway answer', () => {
  it('names no id of the list that comes after the model that answered (never reached)', async () => {
    const responses = await ask('/v1/responses', { model: 'test/resp', models: ['test/chat'], input: 'hi' });
    expect(responses.body.router_metadata).toMatchObject({ attempt: 1, strategy: 'direct', attempts: [{ provider: 'up', model: 'test/resp', ok: true }] });
    const chat = await ask('/v1/chat/completions', { model: 'test/chat', models: ['nosuch/model'], messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.body.router_metadata).toMatchObject({ attempt: 1, strategy: 'direct', attempts: [{ provider: 'chatonly', model: 'test/chat', ok: true }] });
  });
});
