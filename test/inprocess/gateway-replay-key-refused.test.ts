import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { failing, type LocalUpstream } from '../support/upstreams.js';

// A provider's 401 or 403 met live names its api_key_env; replayed from a cassette it said only
// "up: HTTP 401 …": nothing of the cassette it came from, nor that it was the key of the recording's
// run that was refused (on --replay no key is sent). Now it names the file and what to do.
let dir: string;
let up: LocalUpstream;
const BODY = { model: 't/m', messages: [{ role: 'user', content: 'let me in' }] };
const yaml = (url: string, env: NodeJS.ProcessEnv, keysRequired: boolean) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", api_key_env: UP_KEY, models: { t/m: m } }\n`, env, { keys: keysRequired ? 'required' : 'unused' });
const ask = async (e: Emulator) => {
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
  return { status: res.status, body: (await res.json()) as any };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-replay-key-refused-'));
  up = await failing(401);
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a refused key replayed from a cassette', () => {
  it('names the cassette, the api_key_env to check and how to record it again', async () => {
    const cassettes = join(dir, 'cassettes');
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: yaml(up.baseUrl, { UP_KEY: 'a-key-it-refuses' }, true), cassettes: { dir: cassettes, mode: 'record' } } });
    try {
      const live = await ask(recorder);
      expect(live.status).toBe(502);
      expect(live.body.error.message).toMatch(/up: HTTP 401 .*is UP_KEY \(its api_key_env\) a key this provider takes\?/);
    } finally {
      await recorder.close();
    }
    const [file] = readdirSync(cassettes);
    const path = join(cassettes, file!);
    const replayed = async () => {
      const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: yaml('http://127.0.0.1:9/v1', {}, false), cassettes: { dir: cassettes, mode: 'replay', timing: 0 } } });
      try {
        return await ask(player);
      } finally {
        await player.close();
      }
    };
    const got = await replayed();
    expect(got.status).toBe(502);
    expect(got.body.error.message).toContain('up: HTTP 401');
    expect(got.body.error.message).toContain(`replayed from ${path}`);
    expect(got.body.error.message).toMatch(/UP_KEY \(its api_key_env\)/);
    expect(got.body.error.message).toContain('--record-missing');
    // A take kept as a plain 401 answer (an older version's, or written by hand) says as much.
    const cassette = JSON.parse(readFileSync(path, 'utf8'));
    delete cassette.response.failure;
    cassette.response.body = { error: { code: 401, message: 'no such key' } };
    writeFileSync(path, JSON.stringify(cassette));
    const plain = await replayed();
    expect(plain.body.error.message).toContain('up: HTTP 401');
    expect(plain.body.error.message).toContain(`replayed from ${path}`);
  });
});
