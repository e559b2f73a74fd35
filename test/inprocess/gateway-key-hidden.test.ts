import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { gatewayForAll } from '../support/gateway-for-all.js';

// The gateway's provider key goes upstream and nowhere else: an upstream that echoes it in its
// refusal (as "Incorrect API key provided: ..." does) must not hand it to the gateway's caller.
const PROVIDER_KEY = 'sk-provider-secret-0123456789abcdef';

const gw = gatewayForAll({
  prefix: 'router-key-hidden-',
  upstreams: { up: (req, res, body) => {
    const echo = `Incorrect API key provided: ${req.headers.authorization?.slice(7)}`;
    if (body.stream === true) {
      // One token, then an error event that echoes the key (chat's error chunk, Responses' error event).
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const first = req.url!.endsWith('/responses')
        ? { type: 'response.output_text.delta', sequence_number: 1, delta: 'Hi' }
        : { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] };
      res.end(`data: ${JSON.stringify(first)}\n\ndata: ${JSON.stringify({ type: 'error', error: { message: echo } })}\n\n`);
      return;
    }
    const asked = String(req.url!.endsWith('/audio/speech') ? body.input : (body.messages as { content: string }[])[0]!.content);
    if (asked === 'long') {
      // A refusal whose key straddles the 200 characters of it a failure keeps.
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `${'x'.repeat(135)} ${echo}` } }));
      return;
    }
    const status = Number(asked);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: echo } }));
  } },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", api_key_env: UP_KEY, models: { test/m: m }, speech_models: { test/tts: tts }, responses: true }\n`,
  env: { UP_KEY: PROVIDER_KEY },
});

describe('the provider key', () => {
  it.each([[401, 502], [400, 400]])('an upstream %i that echoes it: the caller gets a %i without it', async (status, expected) => {
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: String(status) }] }) });
    expect(res.status).toBe(expected);
    const text = await res.text();
    // The upstream did get it (so the echo is real), the caller's key never.
    expect(gw.upstream('up').seen.at(-1)!.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(text).toMatch(/Incorrect API key provided: \[provider key\]/);
    expect(text).not.toContain(PROVIDER_KEY);
    expect(JSON.stringify(gw.upstream('up').seen)).not.toContain(gw.apiKey);
  });

  it.each([[401, 502], [400, 400]])('speech (a management key): an upstream %i that echoes it: the caller gets a %i without it', async (status, expected) => {
    const res = await fetch(`${gw.gateway.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/tts', input: String(status), voice: 'alloy' }) });
    expect(res.status).toBe(expected);
    const text = await res.text();
    expect(gw.upstream('up').seen.at(-1)!.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(text).toMatch(/Incorrect API key provided: \[provider key\]/);
    expect(text).not.toContain(PROVIDER_KEY);
  });

  it.each([['/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }], ['/v1/responses', { input: 'hi' }]])('%s streamed: an error mid-stream that echoes it ends the stream without it', async (path, ask) => {
    const res = await fetch(`${gw.gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', stream: true, ...ask }) });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(gw.upstream('up').seen.at(-1)!.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    expect(text).toMatch(/mid-stream: .*Incorrect API key provided: \[provider key\]/);
    expect(text).not.toContain(PROVIDER_KEY.slice(0, 12));
  });

  it('a refusal cut where its echo of the key is: no part of the key is left', async () => {
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: 'long' }] }) });
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).toContain('Incorrect API key provided: [provider key]');
    expect(text).not.toContain(PROVIDER_KEY.slice(0, 8));
  });

  it('--record: the cassette of a refusal that echoes it keeps the refusal, not the key', async () => {
    const tapes = join(gw.dir, 'tapes');
    const config = parseProviders(`providers:\n  - { name: up, base_url: "${gw.upstream('up').baseUrl}", api_key_env: UP_KEY, models: { test/m: m } }\n`, { UP_KEY: PROVIDER_KEY });
    const recorder = await startEmulator({ stateDir: join(gw.dir, 'recorder'), port: 0, gateway: { config, cassettes: { dir: tapes, mode: 'record' } } });
    try {
      const res = await fetch(`${recorder.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${recorder.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: '400' }] }) });
      expect(res.status).toBe(400);
    } finally {
      await recorder.close();
    }
    const files = readdirSync(tapes);
    expect(files).toHaveLength(1);
    const tape = readFileSync(join(tapes, files[0]!), 'utf8');
    expect(tape).toContain('Incorrect API key provided: [provider key]');
    expect(tape).not.toContain(PROVIDER_KEY);
  });
});
