import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';

// Streams whose clients do not read (#31, bench row "150 slow readers"): another client is still answered.
let emu: Emulator;
let dir: string;
let apiKey: string;
const sockets: Socket[] = [];
/** The emulator's side of each connection, by the client's port. */
const served = new Map<number, Socket>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-slow-readers-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  emu.server.on('connection', (s: Socket) => served.set(s.remotePort!, s));
  apiKey = emu.store.firstKeys().apiKey;
  await fetch(`${emu.apiRoot}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${emu.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1e6 }) });
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A chat stream of the longest lorem answer (76 MB of events). */
const LONGEST = JSON.stringify({ model: 'local/lorem', stream: true, max_tokens: 262_144, messages: [{ role: 'user', content: 'write 300000 words' }] });

/**
 * Bytes the emulator made for the connection whose client has port `port`: handed to the kernel, or held in its
 * buffers waiting for the kernel to take them (net.Socket's bytesWritten counts both).
 */
const madeFor = (port: number) => served.get(port)?.bytesWritten ?? 0;

/**
 * A chat stream of the longest lorem answer, on a raw connection that never reads; resolves once its head came back,
 * with that head and its client's port, or fails then if `bound` bytes or more were made for it already.
 */
function unreadStream(bound: number): Promise<{ head: string; port: number }> {
  const body = LONGEST;
  const socket = connect(emu.port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  socket.write(`POST /api/v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  return new Promise((resolve, reject) =>
    socket.once('data', (first) => {
      // Reads nothing more: the kernel's buffers fill, then the emulator's.
      socket.pause();
      const made = madeFor(socket.localPort!);
      if (made >= bound) reject(new Error(`${made} bytes made before the stream's first byte came back`));
      resolve({ head: first.toString('latin1').split('\r\n')[0]!, port: socket.localPort! });
    }),
  );
}

describe('streams whose clients do not read', () => {
  it('make no more than their lookahead before they wait for their reader: another client is answered', async () => {
    // A count, not a time: made as they are sent, the streams make at most their lookahead (1 MiB each) and what the
    // kernel takes before they wait for their readers (measured: 5.1 MB a stream, however long it is left; the kernel
    // buffers at most 4 MiB a socket for sending). A stream that made its whole answer (76 MB) before its first byte
    // (the defect, measured: 76,062,853 bytes at its head) keeps every client whose request came after it waiting
    // through all of that work. The number of streams only multiplies the count; the bench row times 150 of them.
    const bound = 16 * 1024 * 1024;
    // One after another, so that the defect fails at the first (all at once, they are all made before any head is read).
    const heads = [];
    for (let i = 0; i < 8; i++) heads.push(await unreadStream(bound));
    const res = await fetch(`${emu.apiRoot}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'still there?' }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('still there?');
    expect(new Set(heads.map((h) => h.head))).toEqual(new Set(['HTTP/1.1 200 OK']));
    for (const { port } of heads) expect(madeFor(port)).toBeLessThan(bound);
  });
});
