import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { deadPort, localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A speech answer whose caller hung up mid-audio was kept under --record as if the upstream had broken
// it there (`broken: "This operation was aborted"`, the audio up to the hang-up): replay then cut every
// later caller's audio at that point, an answer the upstream never gave. Or, when the relay stopped
// reading first, its `.json.partial` was left behind, said at the next start as a gateway killed -9.
// Now a cassette is whole or not kept, as a chat stream the caller hung up on: the next caller's ask
// goes upstream again, and its whole answer is the one replayed.
const PIECE = 4096;
const PIECES = 6;
let dir: string;
let upstream: LocalUpstream;
/** Upstream speech requests whose connection closed (the gateway let them go). */
let closed = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-speech-record-hang-up-'));
  // PIECES pieces of audio, one every 40 ms, each of its own byte value; input "whole" sends them at once.
  upstream = await localUpstream((_req, res, body) => {
    res.on('close', () => closed++);
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    let i = 0;
    const next = () => {
      if (res.destroyed) return;
      if (i === PIECES) return void res.end();
      res.write(Buffer.alloc(PIECE, ++i));
      setTimeout(next, body.input === 'whole' ? 0 : 40);
    };
    next();
  });
});

afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const yaml = (base: string) => parseProviders(`providers:\n  - { name: up, base_url: "${base}", speech_models: { test/tts: t } }\n`, {});
const BODY = { model: 'test/tts', input: 'hello there', voice: 'alloy' };

/** A real client: reads the first piece of audio, then destroys its socket. */
function hangUpAfterFirstBytes(gateway: Emulator): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${gateway.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().managementKey}`, 'content-type': 'application/json' } }, (res) => {
      res.once('data', (d: Buffer) => {
        req.destroy();
        resolve(d.length);
      });
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end(JSON.stringify(BODY));
  });
}

const whole = async (gateway: Emulator) => {
  const res = await fetch(`${gateway.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
  return { status: res.status, audio: Buffer.from(await res.arrayBuffer()) };
};

const files = (cassettes: string) => readdirSync(cassettes).sort();

const recorder = (cassettes: string, name: string) => startEmulator({ stateDir: join(dir, name), port: 0, gateway: { config: yaml(upstream.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });

describe('speech under --record, its caller hanging up mid-audio', () => {
  it('keeps no cassette of it (no partial file either), and the next whole answer is the one replayed', async () => {
    const cassettes = join(dir, 'cassettes');
    const first = await recorder(cassettes, 'rec1');
    const before = closed;
    try {
      expect(await hangUpAfterFirstBytes(first)).toBeGreaterThan(0);
      // The upstream is let go.
      await vi.waitFor(() => expect(closed).toBe(before + 1), { timeout: 10_000 });
    } finally {
      // Its close writes every cassette of an answer it gave: none.
      await first.close();
    }
    expect(files(cassettes)).toEqual([]);
    // The next caller hears it whole; that is what is kept.
    const second = await recorder(cassettes, 'rec2');
    try {
      const heard = await whole(second);
      expect([heard.status, heard.audio.length]).toEqual([200, PIECE * PIECES]);
    } finally {
      await second.close();
    }
    expect(files(cassettes)).toHaveLength(1);
    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: yaml(`http://127.0.0.1:${await deadPort()}/v1`), cassettes: { dir: cassettes, mode: 'replay', timing: 0 } } });
    try {
      const replayed = await whole(player);
      expect([replayed.status, replayed.audio.length]).toEqual([200, PIECE * PIECES]);
      expect([...new Set(replayed.audio)]).toEqual([1, 2, 3, 4, 5, 6]);
    } finally {
      await player.close();
    }
  });
});
