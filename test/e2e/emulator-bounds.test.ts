import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { SETTLE, waitBound } from '../support/until.js';
import { BIN, startTestEnv } from '../helpers.js';
import { startedForAll } from '../support/for-all.js';

// No request can take the emulator down: what needs a serve process (SIGTERM, a reader that
// does not read). The rest runs in process: test/inprocess/emulator-limits.test.ts.
const t = startedForAll(() => startTestEnv());

describe('serve stops promptly', () => {
  it('at once on SIGTERM (not after the slow fault ends), with a slow fault parked and a client waiting', async () => {
    const state = mkdtempSync(join(t.dir, 'stop-'));
    // A fault far longer than the test's timeout: a serve that waits it out fails the test by that timeout.
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', state, '--json', '--fault', 'slow,delay_ms=600000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Killed after the test, also one that its timeout ended (a finally never runs then).
    onTestFinished(() => void child.kill('SIGKILL'));
    const info = await new Promise<any>((r) => child.stdout!.once('data', (c) => r(JSON.parse(String(c)))));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    void fetch(`${info.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${info.api_key}`, 'content-type': 'application/json' }, body: '{}' }).catch(() => {});
    // The request is in (its fault parked) when the serve's log has it; its emulator routes take no fault.
    const logged = async () => {
      const res = await fetch(`${info.api_root}/_emulator/requests`, { headers: { authorization: `Bearer ${info.operator_key}` } });
      return ((await res.json()) as { data: { path: string }[] }).data.some((e) => e.path === '/v1/chat/completions');
    };
    await vi.waitFor(async () => expect(await logged()).toBe(true), SETTLE);
    child.kill('SIGTERM');
    // Not timed: a wall-clock bound fails on a loaded machine; the defect waits out the 10 min fault.
    expect(await exited).toBe(0);
  });
});

describe('a stream the client does not read', () => {
  it('is made only a little ahead of the client: the server holds about a megabyte, not the 76 MB answer', async () => {
    const state = mkdtempSync(join(t.dir, 'ahead-'));
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', state, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const info = await new Promise<any>((r) => child.stdout!.once('data', (c) => r(JSON.parse(String(c)))));
      const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;
      const before = rssMiB();
      const res = await fetch(`${info.api_root}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${info.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local/lorem', stream: true, messages: [{ role: 'user', content: 'write 9999999 words' }] }),
      });
      const reader = res.body!.getReader();
      await reader.read();
      expect(await heldBack(info, 1)).toHaveLength(1);
      expect(rssMiB() - before).toBeLessThan(40);
      await reader.cancel();
    } finally {
      await stop(child);
    }
  });

  it('many readers that read nothing (chat and Responses) hold about a megabyte each, not their whole answers (#31)', async () => {
    const state = mkdtempSync(join(t.dir, 'readers-'));
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', state, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const sockets: Socket[] = [];
    try {
      const info = await new Promise<any>((r) => child.stdout!.once('data', (c) => r(JSON.parse(String(c)))));
      const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;
      // Credits for all 40 answers at once: short of them, all but 12 were refused (402) and read nothing.
      await fetch(`${info.api_root}/_emulator/credits`, { method: 'POST', headers: { authorization: `Bearer ${info.management_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1e6 }) });
      const before = rssMiB();
      const chat = JSON.stringify({ model: 'local/lorem', stream: true, max_tokens: 262_144, messages: [{ role: 'user', content: 'write 300000 words' }] });
      const responses = JSON.stringify({ model: 'local/lorem', stream: true, max_output_tokens: 262_144, input: 'write 300000 words' });
      const request = (path: string, body: string) => `POST /api${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${info.api_key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      for (let i = 0; i < 40; i++) {
        const socket = connect(Number(new URL(info.api_root).port), '127.0.0.1');
        socket.on('error', () => {});
        socket.pause();
        socket.write(i % 2 ? request('/v1/responses', responses) : request('/v1/chat/completions', chat));
        sockets.push(socket);
      }
      expect(await heldBack(info, 40)).toHaveLength(40);
      // Measured: 66 MB; 2.1 GB when each answer's pieces were made up front (12 readers, the rest refused: 170 MB).
      expect(rssMiB() - before).toBeLessThan(120);
    } finally {
      for (const s of sockets) s.destroy();
      await stop(child);
    }
  });
});

/**
 * Waits until `streams` connections of the serve at `info` hold a megabyte or more written and unsent, the same bytes
 * at two looks in a row: each stream has filled the kernel's buffers and its own lookahead, and makes nothing more
 * until its client reads. A server that made its answers regardless got to make them all meanwhile (had it written
 * without waiting, its unsent bytes still grow at the second look). The unsent bytes of those connections.
 */
async function heldBack(info: { api_root: string; operator_key: string }, streams: number): Promise<number[]> {
  let last: number[] = [];
  // The bound only ends a wait for streams that never fill: 40 answers made whole at load 20 took over a minute.
  for (const end = Date.now() + waitBound(); Date.now() < end; ) {
    const res = await fetch(`${info.api_root}/_emulator/connections`, { headers: { authorization: `Bearer ${info.operator_key}` } });
    const held = ((await res.json()) as { data: { unsent_bytes: number }[] }).data.map((c) => c.unsent_bytes).filter((n) => n >= 1024 * 1024);
    held.sort((a, b) => a - b);
    if (held.length >= streams && held.join() === last.join()) return held;
    last = held;
    await new Promise((r) => setTimeout(r, 20));
  }
  return last;
}

/** Stops an emulator and waits for it: it still writes its state folder as it ends. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
