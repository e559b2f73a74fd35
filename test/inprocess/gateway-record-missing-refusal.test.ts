import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';

// `--record-missing` fills what a recording lacks. A refusal it kept (the key was wrong that day) was
// replayed as the request's first answer on every later `--record-missing` run, before the upstream
// was asked again: a user who fixed the key still got the 401's 502 first. Now such a failure is a gap
// (`record_missing: true`): asked again, and what the upstream says then takes its place.
let dir: string;
let up: LocalUpstream;
let refusals = 1;
const ANSWER = { id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'welcome' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
const BODY = { model: 't/m', messages: [{ role: 'user', content: 'let me in' }] };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-record-missing-refusal-'));
  // Refuses the key the first time it is asked, then answers.
  up = await localUpstream((_req, res) => {
    if (refusals-- > 0) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ANSWER));
  });
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cassettes = () => join(dir, 'cassettes');
const takes = () => readdirSync(cassettes()).map((f) => JSON.parse(readFileSync(join(cassettes(), f), 'utf8')) as Cassette);

async function run<T>(name: string, mode: 'replay' | 'replay-record', use: (e: Emulator) => Promise<T>): Promise<T> {
  const config = parseProviders(`providers:\n  - { name: up, base_url: "${up.baseUrl}", api_key_env: UP_KEY, models: { t/m: m } }\n`, { UP_KEY: 'a-key-of-the-gateway' });
  const e = await startEmulator({ stateDir: join(dir, name), port: 0, gateway: { config, cassettes: { dir: cassettes(), mode, timing: 0 } } });
  try {
    return await use(e);
  } finally {
    await e.close();
  }
}

const ask = async (e: Emulator) => {
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
  return { status: res.status, body: (await res.json()) as { choices?: { message: { content: string } }[]; error?: { message: string } } };
};

describe('a refusal --record-missing kept', () => {
  it('is asked again by the next --record-missing run, and replaced by the answer that comes', async () => {
    expect((await run('first', 'replay-record', ask)).status).toBe(502);
    expect(takes().map((c) => [c.take ?? 1, c.response.status, c.record_missing])).toEqual([[1, 401, true]]);
    // Replayed, it says what to do: no file to delete.
    expect((await run('replayed', 'replay', ask)).body.error!.message).toContain('run router serve --record-missing: it asks again');

    // The key taken now: asked again at once (before, the 401 was replayed first), the answer in the refusal's place.
    const before = up.seen.length;
    const second = await run('second', 'replay-record', ask);
    expect(second.status).toBe(200);
    expect(up.seen.length).toBe(before + 1);
    expect(takes().map((c) => [c.take ?? 1, c.response.status, c.record_missing, !!c.response.failure])).toEqual([[1, 200, undefined, false]]);

    // From then on the answer is what replay gives, and --record-missing asks nothing.
    const asked = up.seen.length;
    expect((await run('third', 'replay-record', ask)).body.choices![0]!.message.content).toBe('welcome');
    expect((await run('fourth', 'replay', ask)).body.choices![0]!.message.content).toBe('welcome');
    expect(up.seen.length).toBe(asked);
  });
});
