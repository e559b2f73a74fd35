import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';

// A request whose body is already in the server's buffer when its route reads it (sent in one write with its
// head) is read through its end, whatever the route does with it: answered, refused before it is read, refused
// as it is read. A body taken from the buffer without its end (tried once and dropped: the next request on the
// keep-alive connection then waited ~35 ms) leaves `readableEnded` false when the answer is out. One raw
// connection, requests one after another; each answer awaited, no timing asserted.
let dir: string;
let emu: Emulator;
const seen: IncomingMessage[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-arrived-body-'));
  emu = await startEmulator({ stateDir: dir, port: 0 });
  emu.server.prependListener('request', (req: IncomingMessage) => seen.push(req));
});
afterAll(async () => {
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Answers read off one socket, in order: each a status and its body (Content-Length framed). */
function answers(socket: Socket): () => Promise<{ status: number; body: string }> {
  let buffered = Buffer.alloc(0);
  let wake: (() => void) | undefined;
  socket.on('data', (d: Buffer) => {
    buffered = Buffer.concat([buffered, d]);
    wake?.();
  });
  const more = () => new Promise<void>((resolve) => (wake = resolve));
  return async () => {
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
        expect(length, head).toBeGreaterThanOrEqual(0);
        if (buffered.length >= end + 4 + length) {
          const body = buffered.subarray(end + 4, end + 4 + length).toString('utf8');
          buffered = buffered.subarray(end + 4 + length);
          return { status: Number(head.split(' ')[1]), body };
        }
      }
      await more();
    }
  };
}

const request = (path: string, body: string, key: string) =>
  `POST /api${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

it('reads a body that arrived with its head to its end, and takes the next request on the same connection', async () => {
  const key = emu.store.firstKeys().apiKey;
  const chat = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi é' }] });
  const asks: [path: string, body: string, key: string, status: number][] = [
    ['/v1/chat/completions', chat, key, 200],
    ['/v1/chat/completions', '{"model":', key, 400], // refused as it is read: not JSON
    ['/v1/chat/completions', chat, 'sk-wrong', 401], // refused before it is read
    ['/v1/nowhere', chat, key, 404],
    ['/v1/chat/completions', chat, key, 200],
    ['/v1/embeddings', JSON.stringify({ model: 'local/embed', input: 'hi' }), key, 200],
    ['/v1/chat/completions', chat, key, 200],
  ];
  const socket = connect(emu.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const next = answers(socket);
  const from = seen.length;
  try {
    for (const [i, [path, body, auth, status]] of asks.entries()) {
      socket.write(request(path, body, auth));
      const got = await next();
      expect(got.status, `${path}: ${got.body}`).toBe(status);
      const req = seen[from + i]!;
      expect(seen.length - from, 'the request came on this connection').toBe(i + 1);
      expect(req.socket, 'the same connection as the first').toBe(seen[from]!.socket);
      expect(req.complete).toBe(true);
      expect(req.readableEnded, `${path} (${status}): its body read to its end`).toBe(true);
    }
  } finally {
    socket.destroy();
  }
});
