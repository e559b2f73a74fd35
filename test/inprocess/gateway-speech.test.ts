import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { checkDriftAll } from '../../src/emulator/providers/drift.js';
import { deadPort, failing, localUpstream, type LocalUpstream } from '../support/upstreams.js';

// `POST /v1/audio/speech` for models a providers file lists under speech_models: the audio relayed
// from another emulator (spoken to only over HTTP), with fallback past a refused and a 503 provider.
let chain: GatewayChain;
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let key: string;
let locals: LocalUpstream[];

beforeAll(async () => {
  const five = await failing(503);
  // Sends some audio, then drops the connection.
  const cut = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    res.write(Buffer.alloc(512, 7));
    setTimeout(() => res.destroy(), 20);
  });
  locals = [five, cut];
  const dead = await deadPort();
  const yaml = (upstreamRoot: string) => `
providers:
  - { name: dead, base_url: "http://127.0.0.1:${dead}/v1", speech_models: { test/tts: local/tts } }
  - { name: five, base_url: "${five.baseUrl}", speech_models: { test/tts: local/tts } }
  - name: up
    base_url: ${upstreamRoot}/v1
    api_key_env: UP_KEY
    speech_models: { test/tts: local/tts }
    prices: { test/tts: { prompt: 0.001 } }
  - { name: cut, base_url: "${cut.baseUrl}", speech_models: { test/cut: x } }
`;
  chain = await startGatewayChain('gateway-speech', yaml, { keys: 'managementKey', locals });
  ({ dir, upstream, gateway, key } = chain);
});

afterAll(() => chain?.close());

const speak = (e: Emulator, body: unknown, k = key) => fetch(`${e.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const balance = () => gateway.store.balance(gateway.store.findKey(key)!.workspace);
const input = 'the tide comes in, the tide goes out';

describe('speech through providers', () => {
  it("relays the upstream's audio byte for byte past a refused and a 503 provider, charged per character", async () => {
    const direct = await speak(upstream, { model: 'local/tts', input, voice: 'alloy' }, chain.upKey);
    const expected = Buffer.from(await direct.arrayBuffer());
    const fiveAsked = locals[0]!.seen.length;
    const before = balance();
    const via = await speak(gateway, { model: 'test/tts', input, voice: 'alloy' });
    expect(via.status).toBe(200);
    expect(via.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    const got = Buffer.from(await via.arrayBuffer());
    expect(got.length).toBeGreaterThan(0);
    expect(got.equals(expected)).toBe(true);
    expect(locals[0]!.seen.length).toBe(fiveAsked + 1);
    expect(before - balance()).toBeCloseTo(input.length * 0.001, 10);
  });

  it("charges at most what is left of the balance, and its generation's total_cost says what was charged", async () => {
    const workspace = gateway.store.findKey(key)!.workspace;
    gateway.store.debit(workspace, balance() - 0.005);
    try {
      const via = await speak(gateway, { model: 'test/tts', input, voice: 'alloy', provider: { only: ['up'] } });
      expect(via.status).toBe(200);
      await via.arrayBuffer();
      expect(balance()).toBeCloseTo(0, 10);
      const gen = await fetch(`${gateway.apiRoot}/v1/generation?id=${via.headers.get('x-generation-id')}`, { headers: { authorization: `Bearer ${key}` } });
      expect(gen.status).toBe(200);
      expect(((await gen.json()) as any).data.total_cost).toBeCloseTo(0.005, 10);
    } finally {
      gateway.store.topUp(workspace, 100);
    }
  });

  it('lists the upstream speech model as a speech model', async () => {
    const res = await fetch(`${gateway.apiRoot}/v1/models?output_modalities=speech`, { headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}` } });
    expect(res.status).toBe(200);
    const listed = ((await res.json()) as any).data.find((m: any) => m.id === 'test/tts');
    expect(listed.architecture.output_modalities).toEqual(['speech']);
  });

  it("gives back the upstream's 400 under its slug", async () => {
    const res = await speak(gateway, { model: 'test/tts', input, voice: 'no-such-voice', provider: { only: ['up'] } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toMatch(/^up: /);
  });

  it('cuts the connection when the audio breaks after its first bytes (no prices: charged nothing)', async () => {
    const before = balance();
    const res = await speak(gateway, { model: 'test/cut', input });
    expect(res.status).toBe(200);
    await expect(res.arrayBuffer()).rejects.toThrow();
    expect(balance()).toBe(before);
  });

  it('answers 502 naming each failure when no provider could, and leaves the fake speech models as they were', async () => {
    const none = await speak(gateway, { model: 'test/tts', input, provider: { only: ['dead', 'five'] } });
    expect(none.status).toBe(502);
    expect(((await none.json()) as any).error.message).toMatch(/dead: connection refused.*five: HTTP 503/);
    const local = await speak(gateway, { model: 'local/tts', input, voice: 'alloy' });
    expect(local.status).toBe(200);
    expect((await local.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });

  it('records speech (audio in base64, a refusal as JSON, a cut) and replays it byte for byte with the upstream gone', async () => {
    const cassettes = join(dir, 'speech-cassettes');
    const yaml = (up: string, cut: string) => parseProviders(`providers:\n  - { name: up, base_url: "${up}", api_key_env: UP_KEY, speech_models: { test/tts: local/tts }, prices: { test/tts: { prompt: 0.001 } } }\n  - { name: cut, base_url: "${cut}", speech_models: { test/cut: x } }\n`, { UP_KEY: chain.upKey });
    const asks = [
      { model: 'test/tts', input, voice: 'alloy' },
      { model: 'test/tts', input, voice: 'no-such-voice' },
      { model: 'test/cut', input },
    ];
    const answers = async (e: Emulator) => {
      const out: { status: number; type: string | null; bytes: Buffer | 'cut' }[] = [];
      for (const body of asks) {
        const res = await speak(e, body, e.store.firstKeys().managementKey);
        const bytes = await res.arrayBuffer().then((b) => Buffer.from(b), () => 'cut' as const);
        out.push({ status: res.status, type: res.headers.get('content-type'), bytes });
      }
      return out;
    };
    const recorder = await startEmulator({ stateDir: join(dir, 'speech-rec'), port: 0, gateway: { config: yaml(`${upstream.apiRoot}/v1`, locals[1]!.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
    let recorded;
    try {
      recorded = await answers(recorder);
    } finally {
      await recorder.close();
    }
    expect(recorded.map((r) => [r.status, r.bytes === 'cut' ? 'cut' : 'bytes'])).toEqual([[200, 'bytes'], [400, 'bytes'], [200, 'cut']]);
    const files = readdirSync(cassettes).map((f) => JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette);
    const spoken = files.find((c) => c.request.body.voice === 'alloy')!;
    expect(spoken.endpoint).toBe('speech');
    expect(Buffer.concat(spoken.response.audio!.map((p) => Buffer.from(p.base64, 'base64'))).equals(recorded[0]!.bytes as Buffer)).toBe(true);
    expect((files.find((c) => c.request.body.voice === 'no-such-voice')!.response.body as any).error.message).toBeTruthy();
    expect(files.find((c) => c.provider === 'cut')!.response.broken).toMatch(/cut/);

    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    const player = await startEmulator({ stateDir: join(dir, 'speech-play'), port: 0, gateway: { config: yaml(dead, dead), cassettes: { dir: cassettes, mode: 'replay', timing: 0 } } });
    try {
      const mkey = player.store.firstKeys().managementKey;
      const before = player.store.balance(player.store.findKey(mkey)!.workspace);
      const replayed = await answers(player);
      expect(replayed).toEqual(recorded);
      expect(before - player.store.balance(player.store.findKey(mkey)!.workspace)).toBeCloseTo(input.length * 0.001, 10);
      const miss = await speak(player, { model: 'test/tts', input: 'never said', voice: 'alloy' }, mkey);
      expect(miss.status).toBe(404);
      expect(((await miss.json()) as any).error.message).toMatch(/replay: no cassette answers this request to up .*differs in input/);
    } finally {
      await player.close();
    }
    const drift = await checkDriftAll(cassettes, yaml(`${upstream.apiRoot}/v1`, locals[1]!.baseUrl), () => {});
    expect(drift.filter((r) => r.file.startsWith('up-')).map((r) => [r.error, r.changes])).toEqual([
      [undefined, []],
      [undefined, []],
    ]);
  });
});
