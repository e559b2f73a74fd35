import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';
import type { LLMock } from '@copilotkit/aimock';
import { aimockGateway, startAimock, streamedText, type AimockGateway } from '../support/aimock.js';

// Attacks on daa2cab0 (an answer queued behind another on a pipelined connection, closed when its
// client goes): three pipelined, cut at each place; a connection reused; a stop with them open.
const SENT = 3;
let dir: string;
let gateway: Emulator;
let upstream: LocalUpstream;
let upstreamOpen = 0;
const arrived: (() => void)[] = [];

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'gen-up', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-pipe-attack-'));
  // "open": SENT words, held open; "done": SENT words and the end.
  upstream = await localUpstream((_req, res, body) => {
    upstreamOpen++;
    res.on('close', () => upstreamOpen--);
    const what = (body.messages as { content: string }[])[0]!.content;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant' }));
    for (let i = 0; i < SENT; i++) res.write(chunk({ content: `${what}${i} ` }));
    if (what === 'done') {
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    }
    arrived.shift()?.();
  });
  const config = parseProviders(`providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/m: m }, prices: { test/m: { prompt: 0.000001, completion: 0.0001 } } }\n`, {});
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

function request(key: string, what: string): string {
  const body = JSON.stringify({ model: 'test/m', stream: true, max_tokens: 100, messages: [{ role: 'user', content: what }] });
  return `POST /api/v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function track() {
  const closed: boolean[] = [];
  const listener = (_req: unknown, res: ServerResponse) => {
    const at = closed.push(false) - 1;
    res.once('close', () => (closed[at] = true));
  };
  gateway.server.on('request', listener);
  return { closed, done: () => gateway.server.off('request', listener) };
}

async function pipelined(whats: string[], cutWhen: (seen: string) => boolean) {
  const { apiKey } = gateway.store.firstKeys();
  const all = Promise.all(whats.map(() => new Promise<void>((r) => arrived.push(r))));
  const t = track();
  const socket: Socket = connect(gateway.port, '127.0.0.1');
  socket.on('error', () => {});
  let seen = '';
  const cut = new Promise<void>((resolve) =>
    socket.on('data', (d: Buffer) => {
      seen += d.toString();
      if (cutWhen(seen)) resolve();
    }),
  );
  socket.write(whats.map((w) => request(apiKey, w)).join(''));
  await all;
  await cut;
  socket.destroy();
  await vi.waitFor(() => expect(t.closed).toEqual(whats.map(() => true)), SETTLE);
  await vi.waitFor(() => expect(upstreamOpen).toBe(0), SETTLE);
  t.done();
  return seen;
}

describe('pipelined attacks', () => {
  it('three pipelined, cut during the first', async () => {
    await pipelined(['open', 'open', 'open'], (s) => s.includes('open2'));
  });
  it('three pipelined, cut after the first answer whole', async () => {
    const seen = await pipelined(['done', 'open', 'open'], (s) => s.includes('[DONE]'));
    expect(seen).toContain('[DONE]');
  });
  it('three pipelined, cut half way through the second', async () => {
    await pipelined(['done', 'open', 'open'], (s) => s.includes('open1'));
  });
  it('three pipelined all whole, then the connection reused; a new connection after cuts works', async () => {
    const { apiKey } = gateway.store.firstKeys();
    const socket = connect(gateway.port, '127.0.0.1');
    let seen = '';
    socket.on('data', (d: Buffer) => (seen += d.toString()));
    socket.write(request(apiKey, 'done') + request(apiKey, 'done') + request(apiKey, 'done'));
    await vi.waitFor(() => expect(seen.split('[DONE]').length).toBe(4), SETTLE);
    socket.write(request(apiKey, 'done'));
    await vi.waitFor(() => expect(seen.split('[DONE]').length).toBe(5), SETTLE);
    expect(seen.split('HTTP/1.1 200').length).toBe(5);
    socket.destroy();
    const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'done' }] }) });
    expect(await res.text()).toContain('[DONE]');
  });
  it('thirty pipelined on one connection: answered, and no listener warning (one close listener a connection)', async () => {
    const { apiKey } = gateway.store.firstKeys();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    let listeners = 0;
    const count = (req: { socket: { listenerCount(e: string): number } }) => (listeners = Math.max(listeners, req.socket.listenerCount('close')));
    gateway.server.on('request', count);
    try {
      const body = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
      const one = `POST /api/v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const socket = connect(gateway.port, '127.0.0.1');
      let seen = '';
      socket.on('data', (d: Buffer) => (seen += d.toString()));
      socket.write(one.repeat(30));
      await vi.waitFor(() => expect(seen.split('HTTP/1.1 200').length - 1).toBe(30), SETTLE);
      socket.destroy();
      // Before: each answer waiting its turn added a `close` listener to the socket (node warned at eleven).
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
      expect(listeners).toBeLessThan(5);
    } finally {
      gateway.server.off('request', count);
      process.off('warning', onWarning);
    }
  });

  it('a stop with pipelined streams open ends them and closes', async () => {
    const { apiKey } = gateway.store.firstKeys();
    const all = Promise.all([0, 1].map(() => new Promise<void>((r) => arrived.push(r))));
    const t = track();
    const socket = connect(gateway.port, '127.0.0.1');
    socket.on('error', () => {});
    let seen = '';
    socket.on('data', (d: Buffer) => (seen += d.toString()));
    const ended = new Promise<void>((r) => socket.on('close', () => r()));
    socket.write(request(apiKey, 'open') + request(apiKey, 'open'));
    await all;
    await vi.waitFor(() => expect(seen).toContain('open2'), SETTLE);
    await gateway.close();
    await ended;
    expect(t.closed).toEqual([true, true]);
    // The first ends with the error chunk and [DONE]; the second, whose turn came after, with one too or a whole error answer.
    const answers = seen.split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/"finish_reason":"error"[^\n]*\n\ndata: \[DONE\]/);
    expect(answers[1]).toMatch(/"finish_reason":"error"[^\n]*\n\ndata: \[DONE\]|^HTTP\/1\.1 502[\s\S]*"error":/);
    await vi.waitFor(() => expect(upstreamOpen).toBe(0), SETTLE);
  });
});

// The same over aimock (an upstream we did not write): a long stream paced by aimock, three pipelined.
describe('pipelined attacks through aimock', () => {
  let mock: LLMock;
  let gw: AimockGateway;
  beforeAll(async () => {
    mock = await startAimock((m) => m.onMessage('long', { content: 'one two three four five six seven eight nine ten '.repeat(5) }, { chunkSize: 4, latency: 20 }));
    gw = await aimockGateway(`providers:\n  - { name: mock, base_url: "${mock.url}/v1", models: { test/chat: gpt-4o }, prices: { test/chat: { prompt: 0.001, completion: 0.002 } } }\nlocal_models: false\n`);
  });
  afterAll(async () => {
    await gw?.close();
    await mock?.stop();
  });

  it('three pipelined, cut during the first: each closed; the next request on a new connection answers whole', async () => {
    const closed: boolean[] = [];
    gw.gateway.server.on('request', (_req, res: ServerResponse) => {
      const at = closed.push(false) - 1;
      res.once('close', () => (closed[at] = true));
    });
    const body = JSON.stringify({ model: 'test/chat', stream: true, messages: [{ role: 'user', content: 'long' }] });
    const one = `POST /api/v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${gw.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const socket = connect(gw.gateway.port, '127.0.0.1');
    socket.on('error', () => {});
    let seen = '';
    const words = new Promise<void>((resolve) =>
      socket.on('data', (d: Buffer) => {
        seen += d.toString();
        if (seen.split('"content":"').length > 5) resolve();
      }),
    );
    socket.write(one + one + one);
    await words;
    socket.destroy();
    await vi.waitFor(() => expect(closed).toEqual([true, true, true]), SETTLE);
    const whole = await gw.post('/chat/completions', { model: 'test/chat', stream: true, messages: [{ role: 'user', content: 'long' }] });
    expect(streamedText(whole.text)).toBe('one two three four five six seven eight nine ten '.repeat(5));
  });
});
