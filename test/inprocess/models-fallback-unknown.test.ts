import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream } from '../support/upstreams.js';

// `models` is "used for fallback" (api.md), and neither it nor the yaml says what an id that names no
// model does there. A list whose first id was unknown (or malformed) was a 400 on it, though a later
// one would answer: such an id is now passed over as a failed attempt is, and router_metadata names it.
// A chain with no model at all is still the 400 of its first id.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let emulator: Emulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-models-fallback-'));
  emulator = await startEmulator({ stateDir: join(dir, 'emulator'), port: 0 });
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, responses: true, models: { test/m: local/echo } }\n  - { name: gone, base_url: "http://127.0.0.1:9/v1", models: { test/down: m } }\n`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
});

afterAll(async () => {
  for (const e of [gateway, upstream, emulator]) await e?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function ask(e: Emulator, body: Record<string, unknown>, path = '/v1/chat/completions', metadata = 'x-router-metadata'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json', [metadata]: 'enabled' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const messages = [{ role: 'user', content: 'hi' }];

describe('a fallback list whose first id names no model', () => {
  it('the fake models: the next model answers, router_metadata names the one passed over', async () => {
    const got = await ask(emulator, { models: ['nosuch/model', 'local/echo'], messages });
    // Before: 400 "nosuch/model is not a valid model ID".
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.model).toBe('local/echo');
    // The id was never asked: one attempt, the id passed over (as the gateway says it, below).
    expect(got.body.router_metadata).toMatchObject({ requested: 'nosuch/model', attempt: 1, strategy: 'fallback' });
    expect(got.body.router_metadata.summary).toContain('passed over, not asked: none (nosuch/model is not a valid model ID)');
    // A malformed id is passed over alike; so is one in Responses.
    expect((await ask(emulator, { model: 'no slash', models: ['local/echo'], messages })).status).toBe(200);
    const responses = await ask(emulator, { model: 'nosuch/model', models: ['local/echo'], input: 'hi' }, '/v1/responses');
    expect([responses.status, responses.body.model]).toEqual([200, 'local/echo']);
  });

  it('a gateway: the upstream model answers, its passed_over names the id (never asked), its attempts the providers asked', async () => {
    const got = await ask(gateway, { model: 'nosuch/model', models: ['test/m'], messages });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect([got.body.model, got.body.provider]).toEqual(['test/m', 'up']);
    expect(got.body.router_metadata.attempts).toEqual([{ provider: 'up', model: 'test/m', ok: true }]);
    expect(got.body.router_metadata.passed_over).toEqual([{ provider: 'none', model: 'nosuch/model', reason: 'nosuch/model is not a valid model ID', status: 400 }]);
    // One provider asked; a fallback model answered.
    expect(got.body.router_metadata).toMatchObject({ requested: 'nosuch/model', attempt: 1, strategy: 'fallback' });
    // openrouter_metadata: the providers asked only (before: the id as an attempt).
    expect((await ask(gateway, { model: 'nosuch/model', models: ['test/m'], messages }, '/v1/chat/completions', 'x-openrouter-metadata')).body.openrouter_metadata.attempts).toEqual([
      { provider: 'up', model: 'test/m', status: 200 },
    ]);
    // The fake models' routing alike (routing-metadata-agree.test.ts: before, the id was an attempt of status 400).
    expect((await ask(emulator, { model: 'nosuch/model', models: ['local/echo'], messages }, '/v1/chat/completions', 'x-openrouter-metadata')).body.openrouter_metadata.attempts).toEqual([
      { provider: 'local-alpha', model: 'local/echo', status: 200 },
    ]);
    // On a gateway: the provider that failed for the first model, then the one that answered; the unknown id passed over.
    const downFirst = await ask(gateway, { models: ['test/down', 'nosuch/model', 'test/m'], messages }, '/v1/chat/completions', 'x-openrouter-metadata');
    expect(downFirst.body.openrouter_metadata.attempts.map((a: { model: string; status: number }) => [a.model, a.status])).toEqual([
      ['test/down', 502],
      ['test/m', 200],
    ]);
    const responses = await ask(gateway, { model: 'nosuch/model', models: ['test/m'], input: 'hi' }, '/v1/responses');
    expect([responses.status, responses.body.model]).toEqual([200, 'test/m']);
  });

  it('a chain with no model at all is the 400 of its first id, on both', async () => {
    for (const e of [emulator, gateway]) {
      const got = await ask(e, { models: ['nosuch/a', 'nosuch/b'], messages });
      expect([got.status, got.body.error.message]).toEqual([400, 'nosuch/a is not a valid model ID']);
    }
    const alone = await ask(gateway, { model: 'nosuch/a', messages });
    expect([alone.status, alone.body.error.message]).toEqual([400, 'nosuch/a is not a valid model ID']);
  });
});

describe('an unknown id passed over, when every provider asked failed', () => {
  it('leaves the answer to what the providers said: a replay miss its 404, rate limits their 429 and Retry-After', async () => {
    const cassettes = join(dir, 'none-recorded');
    mkdirSync(cassettes);
    const player = await startEmulator({ stateDir: join(dir, 'player'), port: 0, gateway: { config: parseProviders(`providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { test/m: m } }\n`, {}), cassettes: { dir: cassettes, mode: 'replay', timing: 0 } } });
    const busy = await localUpstream((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(JSON.stringify({ error: { code: 429, message: 'slow down' } }));
    });
    const limited = await startEmulator({ stateDir: join(dir, 'limited'), port: 0, gateway: { config: parseProviders(`providers:\n  - { name: busy, base_url: "${busy.baseUrl}", models: { test/m: m } }\n`, {}) } });
    try {
      const missed = await ask(player, { models: ['nosuch/model', 'test/m'], messages });
      // Before: 502 "All providers … unavailable: nosuch/model is not a valid model ID; replay: …".
      expect(missed.status, JSON.stringify(missed.body)).toBe(404);
      expect(missed.body.error.message).toMatch(/^replay: no cassette answers this request to up/);
      const res = await fetch(`${limited.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${limited.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ models: ['nosuch/model', 'test/m'], messages }) });
      // Before: 502 without Retry-After, as if a provider had failed for good.
      expect([res.status, res.headers.get('retry-after')]).toEqual([429, '7']);
      expect(((await res.json()) as any).error.message).toContain('nosuch/model is not a valid model ID');
    } finally {
      await player.close();
      await limited.close();
      await busy.close();
    }
  });
});

