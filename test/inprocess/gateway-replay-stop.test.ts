import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { Gateway } from '../../src/emulator/routing/gateway.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { deadPort, localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// Replayed answers paced by their cassette's times (edited here to wait an hour) and:
// - the caller hangs up while a whole answer waits: the wait ends at the hang-up. Not streamed, the
//   answer is charged in full, as a live upstream's read to its end is (and the service bills it);
//   streamed, nothing is: before, it was relayed as a stream into the closed response, whose writer
//   then waited for ever (the handler never ended);
// - the gateway stops (SIGTERM) mid-stream: before, the replay went on until the sockets were cut
//   after 1 s, the stream ended bare; now with the error chunk and [DONE], as a live stream.
let dir: string;
let up: LocalUpstream;
let player: Emulator | undefined;
const HOUR = 3_600_000;
const WHOLE = { id: 'gen-whole', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'whole answer' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 } };
const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", models: { test/m: m }, speech_models: { test/tts: tts }, prices: { test/m: { prompt: 0.001, completion: 0.001 } } }\n`, {});
const body = (stream: boolean, content: string) => ({ model: 'test/m', stream, messages: [{ role: 'user', content }] });
const ask = (e: Emulator, b: object, key: string, signal?: AbortSignal) =>
  fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(b), signal });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-replay-stop-'));
  // A whole answer, even to a stream request ('whole …'); a stream of two tokens otherwise.
  up = await localUpstream((_req, res, b) => {
    const content = String((b.messages as { content: string }[])[0]!.content);
    if (content.startsWith('whole')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(WHOLE));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk('Hello')}${sseChunk(' world', 'stop')}data: ${JSON.stringify({ id: 'gen-local', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } })}\n\ndata: [DONE]\n\n`);
  });
  const cassettes = join(dir, 'cassettes');
  const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: yaml(up.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
  try {
    for (const b of [body(false, 'whole, not streamed'), body(true, 'whole, streamed'), body(true, 'a stream')]) expect((await (await ask(recorder, b, recorder.store.firstKeys().apiKey)).text()).length).toBeGreaterThan(0);
  } finally {
    await recorder.close();
  }
  // Edited as a person would: every wait after the first token an hour long.
  for (const f of readdirSync(cassettes)) {
    const c = JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette;
    if (c.response.chunks) c.response.chunks.forEach((chunk, i) => (chunk.after_ms = i ? HOUR : 0));
    else c.response.after_ms = HOUR;
    writeFileSync(join(cassettes, f), JSON.stringify(c, null, 2));
  }
  const dead = `http://127.0.0.1:${await deadPort()}/v1`;
  player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: yaml(dead), cassettes: { dir: cassettes, mode: 'replay' } } });
});

afterAll(async () => {
  vi.restoreAllMocks();
  await player?.close();
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a replayed whole answer the caller hangs up on while it waits', () => {
  it.each([false, true])('stream %s: the request ends at once; charged in full only when not streamed', async (stream) => {
    const { apiKey } = player!.store.createWorkspace(`cut-${stream}`, 100);
    const handled = vi.spyOn(Gateway.prototype, 'chat');
    const stop = new AbortController();
    const res = ask(player!, body(stream, stream ? 'whole, streamed' : 'whole, not streamed'), apiKey, stop.signal).catch((e: Error) => e);
    // chat() runs to the replay's wait before it returns its promise.
    await vi.waitFor(() => expect(handled).toHaveBeenCalledTimes(1), SETTLE);
    stop.abort();
    expect(await res).toBeInstanceOf(Error);
    // Streamed, before: never settled. Not streamed: 2,000 tokens at 0.001, as the live answer read to its end.
    await handled.mock.results[0]!.value;
    handled.mockRestore();
    expect(player!.store.balance(`cut-${stream}`)).toBe(stream ? 100 : 98);
  });
});

describe('a gateway stopped while it replays a stream', () => {
  it('ends the stream with the error chunk and [DONE], as a live one', async () => {
    const res = await ask(player!, body(true, 'a stream'), player!.store.firstKeys().apiKey);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('Hello')) text += new TextDecoder().decode((await reader.read()).value);
    const stopped = player!.close();
    player = undefined;
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    await stopped;
    const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events.at(-1)).toBe('data: [DONE]');
    const last = JSON.parse(events.at(-2)!.slice(6));
    expect(last.error.message).toBe('Provider returned an error mid-stream: up: the gateway is stopping');
    expect(last.choices[0].finish_reason).toBe('error');
    expect(text).not.toContain('world');
  });
});

describe('a gateway stopped while replayed speech waits for its first audio', () => {
  it('answers the 502 a live provider gives, not a connection cut a second later', async () => {
    const cassettes = join(dir, 'speech');
    mkdirSync(cassettes);
    // Written by hand, as the format allows: its audio an hour after the request.
    const cassette: Cassette = {
      provider: 'up',
      endpoint: 'speech',
      recorded_at: new Date(0).toISOString(),
      request: { method: 'POST', url: 'http://127.0.0.1:9/v1/audio/speech', headers: { 'content-type': 'application/json' }, body: { model: 'tts', input: 'hi', voice: 'alloy' } },
      response: { status: 200, headers: { 'content-type': 'audio/mpeg' }, audio: [{ after_ms: HOUR, base64: Buffer.from('ID3').toString('base64') }] },
    };
    writeFileSync(join(cassettes, 'up-tts-hand.json'), JSON.stringify(cassette, null, 2));
    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    const speaker = await startEmulator({ stateDir: join(dir, 'speaker'), port: 0, gateway: { config: yaml(dead), cassettes: { dir: cassettes, mode: 'replay' } } });
    const handled = vi.spyOn(Gateway.prototype, 'speak');
    const res = fetch(`${speaker.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${speaker.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/tts', input: 'hi', voice: 'alloy' }) })
      .then(async (r) => ({ status: r.status, text: await r.text() }))
      .catch((e: Error) => e);
    await vi.waitFor(() => expect(handled).toHaveBeenCalledTimes(1), SETTLE);
    handled.mockRestore();
    await speaker.close();
    // Before: the request waited until the sockets were cut (a TypeError: fetch failed).
    expect(await res).toMatchObject({ status: 502 });
    expect((await res as { text: string }).text).toContain('up: the gateway is stopping');
  });
});

