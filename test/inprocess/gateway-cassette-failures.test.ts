import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { deadPort, localUpstream, type LocalUpstream } from '../support/upstreams.js';

// Failures the gateway passed over (a 503, a refused connection) were not recorded: a recording of a
// caller that got a 502 (Retry-After 7) and asked again replayed as the answer alone, its first
// request answered 200 where the recording saw the 502. Now each such failure is a take of its request
// (`response.failure`), replayed as the same failure when its turn comes.
let dir: string;
let up: LocalUpstream;
const ANSWER = { id: 'gen-ok', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'at last' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
const BODY = { model: 't/m', messages: [{ role: 'user', content: 'try again' }] };
const yaml = (url: string, speech: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", models: { t/m: m }, speech_models: { t/tts: tts } }\n  - { name: dead, base_url: "${speech}", speech_models: { t/tts: tts } }\n`, {});
const ask = async (e: Emulator, path = '/v1/chat/completions', body: object = BODY) => {
  const res = await fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().managementKey}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify(body) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text: Buffer.from(await res.arrayBuffer()).toString('latin1') };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-cassette-failures-'));
  let chats = 0;
  let speeches = 0;
  // Busy (503, Retry-After 7) the first time each is asked, then an answer.
  up = await localUpstream((req, res) => {
    const speech = req.url!.endsWith('/audio/speech');
    if ((speech ? speeches++ : chats++) === 0) {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '7' });
      return void res.end(JSON.stringify({ error: { code: 503, message: 'busy, come back later' } }));
    }
    res.writeHead(200, { 'content-type': speech ? 'audio/mpeg' : 'application/json' });
    res.end(speech ? 'ID3 voiced' : JSON.stringify(ANSWER));
  });
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a failure passed over while recording', () => {
  it('is a take: a retry after a 503 replays the 502 (its Retry-After) and then the answer, speech too', async () => {
    const cassettes = join(dir, 'cassettes');
    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    const speech = { model: 't/tts', input: 'hi', voice: 'alloy', provider: { order: ['dead', 'up'] } };
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: yaml(up.baseUrl, dead), cassettes: { dir: cassettes, mode: 'record' } } });
    let recorded: Awaited<ReturnType<typeof ask>>[];
    try {
      recorded = [await ask(recorder), await ask(recorder), await ask(recorder, '/v1/audio/speech', speech), await ask(recorder, '/v1/audio/speech', speech)];
    } finally {
      await recorder.close();
    }
    expect(recorded.map((r) => [r.status, r.retryAfter])).toEqual([
      [502, '7'],
      [200, null],
      // Speech's dead provider gave no Retry-After: none comes back.
      [502, null],
      [200, null],
    ]);
    const takes = readdirSync(cassettes).map((f) => JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette);
    // Before: only the two answers were kept.
    const failed = takes.filter((c) => c.response.failure).map((c) => [c.provider, c.endpoint ?? 'chat', c.take ?? 1, c.response.status, c.response.failure!.reason, c.response.failure!.retry_after]);
    expect(failed.sort()).toEqual([
      ['dead', 'speech', 1, 0, 'refused', undefined],
      ['dead', 'speech', 2, 0, 'refused', undefined],
      ['up', 'chat', 1, 503, 'status', '7'],
      ['up', 'speech', 1, 503, 'status', '7'],
    ]);

    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: yaml(dead, dead), cassettes: { dir: cassettes, mode: 'replay', timing: 0 } } });
    try {
      const replayed = [await ask(player), await ask(player), await ask(player), await ask(player, '/v1/audio/speech', speech), await ask(player, '/v1/audio/speech', speech)];
      // Before: the first request answered 200 at once, as the recording's second did.
      expect(replayed.map((r) => [r.status, r.retryAfter])).toEqual([
        [502, '7'],
        [200, null],
        [200, null],
        [502, null],
        [200, null],
      ]);
      expect(replayed[0]!.text).toContain('busy, come back later');
      expect(JSON.parse(replayed[1]!.text).choices[0].message.content).toBe('at last');
      expect(replayed[4]!.text).toBe('ID3 voiced');
      // The refused provider is passed over in the words the recording heard, not "no cassette".
      expect(replayed[3]!.text).not.toContain('replay: no cassette');
    } finally {
      await player.close();
    }
  });
});

describe('--record-missing over a request whose last take is a failure', () => {
  it('replays the failure once, then asks the upstream again and keeps its answer as the next take', async () => {
    const cassettes = join(dir, 'missing');
    let n = 0;
    // A 503 the first time, answers after.
    const flaky = await localUpstream((_req, res) => {
      if (n++ === 0) {
        res.writeHead(503, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { code: 503, message: 'down' } }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ANSWER));
    });
    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    try {
      const recorder = await startEmulator({ stateDir: join(dir, 'm-rec'), port: 0, gateway: { config: yaml(flaky.baseUrl, dead), cassettes: { dir: cassettes, mode: 'record' } } });
      try {
        expect((await ask(recorder)).status).toBe(502);
      } finally {
        await recorder.close();
      }
      const filler = await startEmulator({ stateDir: join(dir, 'm-fill'), port: 0, gateway: { config: yaml(flaky.baseUrl, dead), cassettes: { dir: cassettes, mode: 'replay-record', timing: 0 } } });
      try {
        const asked = flaky.seen.length;
        expect((await ask(filler)).status).toBe(502);
        expect(flaky.seen.length).toBe(asked);
        // The recorded failure repeated for ever would leave --record-missing nothing to ask.
        expect((await ask(filler)).status).toBe(200);
        expect(flaky.seen.length).toBe(asked + 1);
        expect((await ask(filler)).status).toBe(200);
        expect(flaky.seen.length).toBe(asked + 1);
      } finally {
        await filler.close();
      }
      const takes = readdirSync(cassettes).map((f) => JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette);
      expect(takes.map((c) => [c.take ?? 1, !!c.response.failure]).sort()).toEqual([
        [1, true],
        [2, false],
      ]);
    } finally {
      await flaky.close();
    }
  });
});
