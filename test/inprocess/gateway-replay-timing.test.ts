import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { deadPort, localUpstream, sseChunk, type LocalUpstream, withoutGatewayIds } from '../support/upstreams.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';

// Replay keeps a stream's recorded timing: no chunk goes out before its recorded time since the
// request (times --replay-timing). Only lower bounds are asserted: a busy machine makes things later, never sooner.
let dir: string;
let paced: LocalUpstream;
const GAPS = [0, 150, 300];
const WHOLE_MS = 200;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-replay-timing-'));
  paced = await localUpstream((_req, res, body) => {
    if (body.stream !== true) {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'w', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'late whole' }, finish_reason: 'stop' }] }));
      }, WHOLE_MS);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    GAPS.forEach((ms, i) => setTimeout(() => res.write(sseChunk(`t${i} `)), ms));
    setTimeout(() => res.end(`${sseChunk(null, 'stop')}data: [DONE]\n\n`), GAPS.at(-1)! + 50);
  });
});

afterAll(async () => {
  await paced?.close();
  rmSync(dir, { recursive: true, force: true });
});

const yaml = (url: string) => parseProviders(`providers:\n  - { name: paced, base_url: "${url}", models: { test/paced: m } }\n`, {});

/** Each `data:` event of a stream with the milliseconds from the request to its arrival; or a whole answer's. */
async function timed(e: Emulator, stream: boolean): Promise<{ text: string; events: { data: string; ms: number }[] }> {
  const t0 = performance.now();
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/paced', stream, messages: [{ role: 'user', content: 'pace me' }] }) });
  expect(res.status).toBe(200);
  const events: { data: string; ms: number }[] = [];
  let text = '';
  const decoder = new TextDecoder();
  for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>) {
    const ms = performance.now() - t0;
    const before = text.split('\n\n').length - 1;
    text += decoder.decode(piece, { stream: true });
    const all = text.split('\n\n');
    for (const event of all.slice(before, -1)) if (event.startsWith('data: ')) events.push({ data: event.slice(6), ms });
  }
  if (!stream) events.push({ data: text, ms: performance.now() - t0 });
  return { text, events };
}

async function play(cassettes: string, timing: number | undefined, stream: boolean) {
  const player = await startEmulator({ stateDir: join(dir, `play-${timing}-${stream}`), port: 0, gateway: { config: yaml(`http://127.0.0.1:${await deadPort()}/v1`), cassettes: { dir: cassettes, mode: 'replay', timing } } });
  try {
    return await timed(player, stream);
  } finally {
    await player.close();
  }
}

const cassetteOf = (cassettes: string, stream: boolean) =>
  readdirSync(cassettes)
    .map((f) => ({ file: join(cassettes, f), c: JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette }))
    .find(({ c }) => (c.request.body.stream === true) === stream)!;

describe('replay keeps the recorded timing', () => {
  let cassettes: string;
  let recorded: { text: string }[];

  beforeAll(async () => {
    cassettes = join(dir, 'cassettes');
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: yaml(paced.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
    try {
      recorded = [await timed(recorder, true), await timed(recorder, false)];
    } finally {
      await recorder.close();
    }
  });

  it('records each chunk at its time since the request, and a whole answer its time', () => {
    const chunks = cassetteOf(cassettes, true).c.response.chunks!;
    const tokens = chunks.filter((ch) => JSON.stringify(ch.data).includes('"content":"t'));
    expect(tokens).toHaveLength(GAPS.length);
    tokens.forEach((ch, i) => expect(ch.after_ms).toBeGreaterThanOrEqual(GAPS[i]! - 1));
    expect(cassetteOf(cassettes, false).c.response.after_ms).toBeGreaterThanOrEqual(WHOLE_MS - 1);
  });

  it.each([
    ['as recorded', undefined],
    ['twice as long (--replay-timing 2)', 2],
  ])('sends no chunk before its recorded time, %s, byte for byte as recorded', async (_what, timing) => {
    const scale = timing ?? 1;
    const chunks = cassetteOf(cassettes, true).c.response.chunks!;
    const replayed = await play(cassettes, timing, true);
    expect(withoutGatewayIds(replayed.text)).toBe(withoutGatewayIds(recorded[0]!.text));
    // The upstream sent no usage: the gateway adds its own usage chunk (what it counted), live and replayed alike.
    const own = replayed.events.filter((e) => e.data.includes('"choices":[],"usage"'));
    expect(own).toHaveLength(chunks.some((ch) => JSON.stringify(ch.data).includes('"usage"')) ? 0 : 1);
    const relayed = replayed.events.filter((e) => !own.includes(e));
    // The gateway's id, not the upstream's, and a new one on every replay.
    expect(relayed.map((e) => withoutGatewayIds(e.data))).toEqual(chunks.map((ch) => (typeof ch.data === 'string' ? ch.data : JSON.stringify({ ...(ch.data as object), id: 'gen-ID', model: 'test/paced', provider: 'paced' }))));
    relayed.forEach((e, i) => expect(e.ms).toBeGreaterThanOrEqual(chunks[i]!.after_ms * scale - 1));
    const whole = await play(cassettes, timing, false);
    expect(withoutGatewayIds(whole.text)).toBe(withoutGatewayIds(recorded[1]!.text));
    expect(whole.events[0]!.ms).toBeGreaterThanOrEqual(cassetteOf(cassettes, false).c.response.after_ms! * scale - 1);
  });

  it('with timing 0 waits for nothing: a cassette edited to wait ten minutes answers', async () => {
    const edited = join(dir, 'edited');
    cpSync(cassettes, edited, { recursive: true });
    for (const stream of [true, false]) {
      const { file, c } = cassetteOf(edited, stream);
      for (const ch of c.response.chunks ?? []) ch.after_ms = 600_000;
      if (!stream) c.response.after_ms = 600_000;
      writeFileSync(file, JSON.stringify(c, null, 2));
    }
    expect(withoutGatewayIds((await play(edited, 0, true)).text)).toBe(withoutGatewayIds(recorded[0]!.text));
    expect(withoutGatewayIds((await play(edited, 0, false)).text)).toBe(withoutGatewayIds(recorded[1]!.text));
  });
});
