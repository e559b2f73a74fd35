import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { Gateway } from '../../src/emulator/routing/gateway.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { post } from '../support/post.js';
import { deadPort, localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// Two edges of a held stream (the events before its first answer), each failing on the code before:
// - a chat chunk is judged as chat whatever `type` it carries: before, a chunk typed `error` or
//   `response.*` without choices was taken for Responses output, so it opened the caller's stream and
//   a break after it ended with the error chunk instead of the next provider's answer;
// - a caller who hangs up while the stream is held gets nothing opened and nothing kept (the relays'
//   closed-before-created guards). Reached through a replay whose first event was recorded an hour
//   late: the hang-up ends the wait and the rest comes unpaced, into a response already closed.
//   Without the guards the relay wrote into it and kept a cancelled generation for nobody.
let dir: string;
const ups: LocalUpstream[] = [];
const HOUR = 3_600_000;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-held-edges-'));
});

afterAll(async () => {
  for (const u of ups) await u.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a chat chunk with a Responses-like `type` before the first answer', () => {
  it.each(['error', 'response.output_text.delta'])('type %s: held; a break after it falls back to the next provider', async (type) => {
    // That chunk alone, then the connection dropped once it is out.
    const typed = await localUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = { id: 'gen-typed', object: 'chat.completion.chunk', type, created: 1, model: 'm', message: 'overloaded', delta: 'not chat' };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`, () => res.socket?.destroy());
    });
    const ok = await localUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${sseChunk('from ok', 'stop')}data: [DONE]\n\n`);
    });
    ups.push(typed, ok);
    const config = parseProviders(`providers:\n  - { name: typed, base_url: "${typed.baseUrl}", models: { t/t: m } }\n  - { name: ok, base_url: "${ok.baseUrl}", models: { t/t: m } }\n`, {});
    const gateway = await startEmulator({ stateDir: join(dir, `typed-${type}`), port: 0, gateway: { config } });
    try {
      const res = await post({ apiRoot: gateway.apiRoot, apiKey: gateway.store.firstKeys().apiKey }, '/v1/chat/completions', { model: 't/t', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).toBe(200);
      // Before: the typed chunk went to the caller and the break ended the stream with the error chunk.
      expect(res.text).not.toContain('"finish_reason":"error"');
      expect(res.text).not.toContain('not chat');
      expect(res.text).toContain('from ok');
      expect(res.text).toContain('"provider":"ok"');
    } finally {
      await gateway.close();
    }
  });
});

/** A gateway replaying what `answer` gave once, its first event moved an hour after the request. */
async function lateReplay(name: string, responses: boolean, answer: LocalUpstream, asked: object): Promise<Emulator> {
  const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", responses: ${responses}, models: { test/m: m } }\n`, {});
  const cassettes = join(dir, `${name}-cassettes`);
  const recorder = await startEmulator({ stateDir: join(dir, `${name}-rec`), port: 0, gateway: { config: yaml(answer.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
  try {
    const res = await post({ apiRoot: recorder.apiRoot, apiKey: recorder.store.firstKeys().apiKey }, responses ? '/v1/responses' : '/v1/chat/completions', asked);
    expect(res.status).toBe(200);
  } finally {
    await recorder.close();
  }
  const [file] = readdirSync(cassettes);
  const c = JSON.parse(readFileSync(join(cassettes, file!), 'utf8')) as Cassette;
  c.response.chunks!.forEach((chunk, i) => (chunk.after_ms = i ? 0 : HOUR));
  writeFileSync(join(cassettes, file!), JSON.stringify(c, null, 2));
  return startEmulator({ stateDir: join(dir, `${name}-play`), port: 0, gateway: { config: yaml(`http://127.0.0.1:${await deadPort()}/v1`), cassettes: { dir: cassettes, mode: 'replay' } } });
}

/** Asks `player`, hangs up once the gateway handles the request (held at the replay's hour), and waits for the handler's end. */
async function hangUpWhileHeld(player: Emulator, path: string, asked: object, method: 'chat' | 'respond'): Promise<void> {
  const handled = vi.spyOn(Gateway.prototype, method);
  try {
    const stop = new AbortController();
    const res = fetch(`${player.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${player.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(asked), signal: stop.signal }).catch((e: Error) => e);
    // The handler runs to the replay's wait before it returns its promise.
    await vi.waitFor(() => expect(handled).toHaveBeenCalledTimes(1), SETTLE);
    stop.abort();
    expect(await res).toBeInstanceOf(Error);
    await handled.mock.results[0]!.value;
  } finally {
    handled.mockRestore();
  }
}

const generation = (e: Emulator, id: string) => fetch(`${e.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}` } });

describe('a caller who hangs up while the stream is held', () => {
  it('chat: nothing opened, no generation kept', async () => {
    const up = await localUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${sseChunk('Hello')}${sseChunk(' world', 'stop')}data: [DONE]\n\n`);
    });
    ups.push(up);
    const asked = { model: 'test/m', stream: true, messages: [{ role: 'user', content: 'held' }] };
    const player = await lateReplay('chat', false, up, asked);
    try {
      await hangUpWhileHeld(player, '/v1/chat/completions', asked, 'chat');
      // Before (the guard removed): kept as a cancelled generation of 'Hello', sent to nobody.
      expect((await generation(player, 'gen-local')).status).toBe(404);
    } finally {
      await player.close();
    }
  });

  it('Responses: nothing opened, no generation kept', async () => {
    const event = (type: string, n: number, extra: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n, ...extra })}\n\n`;
    const response = { id: 'resp_held', object: 'response', created_at: 1, model: 'm', status: 'in_progress', output: [] };
    const up = await localUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        event('response.created', 0, { response }) +
          event('response.output_text.delta', 1, { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hello' }) +
          event('response.completed', 2, { response: { ...response, status: 'completed', usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } } }),
      );
    });
    ups.push(up);
    const asked = { model: 'test/m', stream: true, input: 'held' };
    const player = await lateReplay('responses', true, up, asked);
    try {
      await hangUpWhileHeld(player, '/v1/responses', asked, 'respond');
      expect((await generation(player, 'resp_held')).status).toBe(404);
    } finally {
      await player.close();
    }
  });
});
