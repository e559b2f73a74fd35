// The emulator under hostile clients (#31): its peak RSS, and how long another client waits meanwhile.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { WORK, startEmulator, report } from './lib.mjs';

const MiB = 1024 * 1024;
const RSS_GOAL_MB = 400;
const WAIT_GOAL_MS = 1000;

const rssMB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** Samples the emulator's RSS and answers small chats one after another while `attack` runs; the peaks of both. */
async function underAttack(emu, seconds, attack) {
  let peak = rssMB(emu.pid);
  let slowest = 0;
  let failed = 0;
  let running = true;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMB(emu.pid))), 50);
  const probe = (async () => {
    const body = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'still there?' }] });
    while (running) {
      const start = performance.now();
      const res = await fetch(`${emu.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${emu.api_key}`, 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
      await res?.arrayBuffer();
      if (res?.status !== 200) failed++;
      slowest = Math.max(slowest, performance.now() - start);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const cleanup = await attack();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  await probe;
  clearInterval(sampler);
  cleanup?.();
  return { peak, slowest, failed };
}

/** A raw connection that sends `head` and `bytes` of body, then neither sends nor reads more. */
function stalledUpload(port, head, bytes) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.once('connect', () => {
      socket.write(head);
      const chunk = Buffer.alloc(MiB, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < bytes) {
          sent += chunk.length;
          if (!socket.write(chunk)) return socket.once('drain', pump);
        }
        resolve(socket);
      };
      pump();
    });
    // Refused or timed out by the server: it stops waiting for us.
    socket.once('close', () => resolve(socket));
    setTimeout(() => resolve(socket), 20_000);
  });
}

function requestHead(emu, path, length) {
  return `POST /api${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${emu.api_key}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
}

function row(name, { peak, slowest, failed }, baseline) {
  report(`${name}: emulator peak RSS`, `${peak.toFixed(0)} MB (idle ${baseline.toFixed(0)} MB)`, `<= ${RSS_GOAL_MB} MB`, peak <= RSS_GOAL_MB);
  report(`  the same: slowest answer to another client`, `${slowest.toFixed(0)} ms${failed ? ` (${failed} not 200)` : ''}`, `<= ${WAIT_GOAL_MS} ms`, slowest <= WAIT_GOAL_MS && failed === 0);
}

export const hostileSections = {
  async hostileUploads() {
    const emu = await startEmulator(join(WORK, 'hostile-uploads'));
    try {
      const baseline = rssMB(emu.pid);
      const sockets = [];
      const result = await underAttack(emu, 5, async () => {
        const prefix = '{"model":"local/echo","messages":[{"role":"user","content":"';
        const head = requestHead(emu, '/v1/chat/completions', 32 * MiB) + prefix;
        sockets.push(...(await Promise.all(Array.from({ length: 30 }, () => stalledUpload(emu.port, head, 30 * MiB)))));
        return () => sockets.forEach((s) => s.destroy());
      });
      row('30 uploads of 30 of 32 MiB, stalled', result, baseline);
    } finally {
      await emu.stop();
    }
  },

  async hostileReaders() {
    const emu = await startEmulator(join(WORK, 'hostile-readers'));
    try {
      const baseline = rssMB(emu.pid);
      const sockets = [];
      const result = await underAttack(emu, 8, async () => {
        const body = JSON.stringify({ model: 'local/lorem', stream: true, max_tokens: 262_144, messages: [{ role: 'user', content: 'write 300000 words' }] });
        for (let i = 0; i < 150; i++) {
          const socket = connect(emu.port, '127.0.0.1');
          socket.on('error', () => {});
          socket.write(requestHead(emu, '/v1/chat/completions', Buffer.byteLength(body)) + body);
          // Reads nothing: the kernel's buffers fill, then the server's.
          socket.pause();
          sockets.push(socket);
        }
        return () => sockets.forEach((s) => s.destroy());
      });
      row('150 slow readers of a 262,144-token stream', result, baseline);
    } finally {
      await emu.stop();
    }
  },

  async jsonBombs() {
    const emu = await startEmulator(join(WORK, 'hostile-bombs'));
    try {
      const baseline = rssMB(emu.pid);
      const keys = Array.from({ length: 1_500_000 }, (_, i) => `"k${i}":"v"`).join(',');
      const bomb = `{"model":"local/echo","messages":[{"role":"user","content":"hi"}],"metadata":{${keys}}}`;
      const result = await underAttack(emu, 3, async () => {
        for (let round = 0; round < 3; round++) {
          await Promise.all(
            Array.from({ length: 3 }, () =>
              fetch(`${emu.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${emu.api_key}`, 'content-type': 'application/json' }, body: bomb })
                .then((r) => r.arrayBuffer())
                .catch(() => {}),
            ),
          );
        }
      });
      row(`3 x 3 JSON bombs of ${(bomb.length / MiB).toFixed(0)} MiB (1.5 M metadata keys)`, result, baseline);
    } finally {
      await emu.stop();
    }
  },
};
