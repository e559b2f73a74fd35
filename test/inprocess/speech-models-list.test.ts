import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, answersHi, type LocalUpstream } from '../support/upstreams.js';

// Speech's `models` list (the gateway's own fallback list for speech, as chat's: docs/gateway.md) was
// honoured only when it named an upstream speech model: one naming fake models only answered from
// `model` alone, the list ignored (no `model`: a 400; an unknown `model`: its 400; a `model` the
// provider preferences leave no provider: the 404), on the emulator and on a gateway alike. Now the
// chain is walked in order as chat's: the first model that can answer does, router_metadata says so.
let dir: string;
let emulator: Emulator;
let chatOnly: LocalUpstream;
let gateway: Emulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-speech-models-'));
  emulator = await startEmulator({ stateDir: join(dir, 'emulator'), port: 0 });
  chatOnly = await localUpstream(answersHi);
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(`providers:\n  - { name: up, base_url: "${chatOnly.baseUrl}", models: { t/m: m } }\n`, {}) } });
});

afterAll(async () => {
  await gateway?.close();
  await emulator?.close();
  await chatOnly?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function speak(e: Emulator, body: Record<string, unknown>) {
  const res = await fetch(`${e.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().managementKey}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify({ voice: 'alloy', input: 'hello there', response_format: 'pcm', ...body }) });
  const audio = Buffer.from(await res.arrayBuffer());
  const meta = res.headers.get('x-router-metadata');
  return { status: res.status, audio, text: audio.toString('utf8', 0, 300), meta: meta ? (JSON.parse(meta) as { attempt: number; requested: string; summary: string }) : undefined };
}

describe.each([
  ['the emulator', () => emulator],
  ['a gateway whose upstreams serve no speech', () => gateway],
])('speech whose models list names fake models only, on %s', (_name, server) => {
  it('answers from the first model of the list when there is no model', async () => {
    const got = await speak(server(), { models: ['local/tts-basic', 'local/tts'] });
    expect(got.status, got.text).toBe(200);
    expect(got.audio.length).toBeGreaterThan(1000);
    expect(got.meta?.summary).toBe('speech: local/tts-basic -> local/tts-basic via local-beta (attempt 1)');
  });

  it('falls back past an id that names no model, and past a model provider.only leaves no provider', async () => {
    const unknown = await speak(server(), { model: 'nosuch/tts', models: ['local/tts'] });
    expect(unknown.status, unknown.text).toBe(200);
    // An id that names no model is passed over, never asked (as the gateway says it): one attempt.
    expect(unknown.meta).toMatchObject({ attempt: 1, requested: 'nosuch/tts', strategy: 'fallback', passed_over: [{ provider: 'none', model: 'nosuch/tts', status: 400 }] });
    expect(unknown.meta?.summary).toContain('-> local/tts via local-alpha (attempt 1)');
    const only = await speak(server(), { model: 'local/tts', models: ['local/tts-basic'], provider: { only: ['local-beta'] } });
    expect(only.status, only.text).toBe(200);
    expect(only.meta?.summary).toContain('-> local/tts-basic via local-beta (attempt 1)');
    expect(only.meta).toMatchObject({ strategy: 'fallback' });
  });

  it('keeps the list\'s order, and refuses as before what nothing in it answers', async () => {
    expect((await speak(server(), { model: 'local/tts', models: ['local/tts-basic'] })).meta?.summary).toBe('speech: local/tts -> local/tts via local-alpha (attempt 1)');
    const none = await speak(server(), { input: 'hi' });
    expect([none.status, JSON.parse(none.text).error.message]).toEqual([400, 'model is required']);
    const nowhere = await speak(server(), { model: 'local/tts', models: ['local/tts-basic'], provider: { only: ['nosuch'] } });
    expect(nowhere.status).toBe(404);
    const tooMany = await speak(server(), { model: 'local/tts', models: ['a/b', 'c/d', 'e/f', 'g/h'] });
    expect(tooMany.status).toBe(400);
  });
});
