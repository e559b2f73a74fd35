import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { deadPort, localUpstream, sseChunk, type LocalUpstream, withoutGatewayIds } from '../support/upstreams.js';

// A caller that asks again after an answer broke sends the same request twice, and the upstream
// answered it differently each time. Before, the second cassette overwrote the first (one file per
// request), so replay answered the retry's whole answer to the first request too. Now each is a
// take of that request, replayed in the order recorded, the last again for any request after it.
let dir: string;
let up: LocalUpstream;
const BODY = { model: 't/m', stream: true, messages: [{ role: 'user', content: 'once more' }] };
const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", models: { t/m: m } }\n`, {});
const ask = async (e: Emulator, body: object = BODY) => {
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-cassette-takes-'));
  let n = 0;
  // The first answer breaks after one token; every later one is whole.
  up = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (n++ === 0) return void res.write(sseChunk('Hel'), () => res.socket?.destroy());
    res.end(`${sseChunk('Hello')}${sseChunk(` again ${n}`, 'stop')}data: [DONE]\n\n`);
  });
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('one request recorded twice with different answers', () => {
  it('keeps both, and replays them in turn, the last one repeating', async () => {
    const cassettes = join(dir, 'cassettes');
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: yaml(up.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
    let recorded: Awaited<ReturnType<typeof ask>>[];
    try {
      recorded = [await ask(recorder), await ask(recorder)];
    } finally {
      await recorder.close();
    }
    expect(recorded[0]!.text).toContain('"finish_reason":"error"');
    expect(recorded[1]!.text).toContain(' again');
    const files = readdirSync(cassettes).sort();
    // Before: one file, the second answer's.
    expect(files).toHaveLength(2);
    const takes = files.map((f) => JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette);
    expect(takes.map((c) => [c.take ?? 1, c.response.broken !== undefined])).toEqual([
      [2, false],
      [1, true],
    ]);
    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: yaml(dead), cassettes: { dir: cassettes, mode: 'replay' } } });
    try {
      const replayed = [await ask(player), await ask(player), await ask(player)];
      expect(replayed.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(replayed.map((r) => withoutGatewayIds(r.text))).toEqual([recorded[0]!.text, recorded[1]!.text, recorded[1]!.text].map(withoutGatewayIds));
    } finally {
      await player.close();
    }
  });
});

describe('a request recorded again with --record, into a folder holding a longer recording of it', () => {
  it('drops the older takes: replay gives the new recording only', async () => {
    const cassettes = join(dir, 'again');
    const body = { ...BODY, messages: [{ role: 'user', content: 'recorded twice over' }] };
    const record = async (times: number) => {
      const recorder = await startEmulator({ stateDir: join(dir, `again-rec-${times}`), port: 0, gateway: { config: yaml(up.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
      try {
        const texts: string[] = [];
        for (let i = 0; i < times; i++) texts.push((await ask(recorder, body)).text);
        return texts;
      } finally {
        await recorder.close();
      }
    };
    expect(await record(2)).toHaveLength(2);
    expect(readdirSync(cassettes)).toHaveLength(2);
    const [fresh] = await record(1);
    // Before: the older run's take 2 stayed beside the new take 1, and replay gave it second.
    expect(readdirSync(cassettes)).toHaveLength(1);
    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    const player = await startEmulator({ stateDir: join(dir, 'again-play'), port: 0, gateway: { config: yaml(dead), cassettes: { dir: cassettes, mode: 'replay' } } });
    try {
      expect([(await ask(player, body)).text, (await ask(player, body)).text].map(withoutGatewayIds)).toEqual([fresh, fresh].map(withoutGatewayIds));
    } finally {
      await player.close();
    }
  });
});
