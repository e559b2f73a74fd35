import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { SETTLE } from '../support/until.js';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

// No request can take the emulator down: what needs a serve process (SIGTERM, a reader that
// does not read). The rest runs in process: test/inprocess/emulator-limits.test.ts.
let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(() => t.close());

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
      // Long enough for the whole answer to be made, had nothing held the server back.
      await new Promise((r) => setTimeout(r, 1500));
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
      // Long enough for each stream to fill the kernel's buffers and then its own megabyte.
      await new Promise((r) => setTimeout(r, 2500));
      // Measured: 40 MB; 170 MB when each answer's pieces were made up front (150 chat readers: 843 MB).
      expect(rssMiB() - before).toBeLessThan(90);
    } finally {
      for (const s of sockets) s.destroy();
      await stop(child);
    }
  });
});

/** Stops an emulator and waits for it: it still writes its state folder as it ends. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
