import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../dist/emulator/server.js';
import { BIN } from '../helpers.js';

// Exactly-once billing across crashes: the emulator kills itself (SIGKILL) right after its Nth
// durable write, for every N of a batch's life; after a restart the batch completes and the
// workspace has paid its cost exactly once.
interface Serve {
  child: ChildProcess;
  apiRoot: string;
  exited: Promise<number | null>;
}

async function serve(state: string, crashAfter?: number): Promise<Serve> {
  const env = { ...process.env, ...(crashAfter ? { ROUTER_EMULATOR_CRASH_AFTER_WRITES: String(crashAfter) } : {}) };
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', state, '--json', '--batch-delay-ms', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.on('exit', (code, signal) => r(signal ? 137 : code)));
  const apiRoot = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line).api_root);
    });
    void exited.then(() => reject(new Error('serve exited before it listened')));
  });
  return { child, apiRoot, exited };
}

const api = async (root: string, key: string, path: string, body?: unknown) => {
  const res = await fetch(`${root}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as any };
};

const BATCH = {
  endpoint: '/v1/chat/completions',
  model: 'local/lorem',
  requests: ['a', 'b', 'c'].map((c) => ({ custom_id: c, body: { messages: [{ role: 'user', content: `write 20 words about ${c}` }] } })),
};

const ended = (list: any) => list.data.every((b: any) => ['completed', 'failed'].includes(b.status));

/** The batches of `root` once every one has ended (a condition, polled: no event says so over HTTP). */
async function batchesEnded(root: string, key: string): Promise<any> {
  for (;;) {
    const list = (await api(root, key, '/v1/batches?limit=100')).json;
    if (ended(list)) return list;
    await new Promise((r) => setTimeout(r, 20));
  }
}

// A batch's life writes 7 times (its 3 requests, 2026-11); the loop ends at the first N past its last write.
const MOST_WRITES = 20;

describe('exactly-once billing across crashes', () => {
  it(
    'for a kill after every durable write of a batch, the cost is charged once',
    async () => {
      let crashes = 0;
      let pastTheLastWrite = false;
      for (let n = 1; n <= MOST_WRITES && !pastTheLastWrite; n++) {
        const state = mkdtempSync(join(tmpdir(), 'router-crash-'));
        try {
          const init = await startEmulator({ stateDir: state, port: 0 });
          const { apiKey, managementKey } = init.store.firstKeys();
          await init.close();
          const first = await serve(state, n);
          const created = await api(first.apiRoot, apiKey, '/v1/batches', BATCH).catch(() => undefined);
          // Killed at its Nth write (a create not answered: it died during it), or alive with the batch ended: then
          // stopped, and a clean stop (exit 0, not killed by the hook as it saved) means N is past the last write.
          if (created) {
            expect(created.status, created.json?.error?.message).toBe(202);
            const outcome = await Promise.race([first.exited.then(() => 'killed'), batchesEnded(first.apiRoot, apiKey).then(() => 'ended', () => 'killed')]);
            if (outcome === 'ended') first.child.kill('SIGTERM');
          }
          if ((await first.exited) === 0) pastTheLastWrite = true;
          else crashes++;
          // The restart, in this process: the same emulator as serve's, without the crash hook.
          const second = await startEmulator({ stateDir: state, port: 0, batchDelayMs: 0 });
          try {
            const list = await batchesEnded(second.apiRoot, apiKey);
            expect(list.data.length, `kill after write ${n}`).toBeLessThanOrEqual(1);
            const credits = (await api(second.apiRoot, managementKey, '/v1/credits')).json.data;
            const charged = list.data.reduce((sum: number, b: any) => sum + (b.status === 'completed' ? b.usage.cost : 0), 0);
            for (const b of list.data) expect(b.status, `kill after write ${n}`).toBe('completed');
            expect(credits.total_usage, `kill after write ${n}`).toBeCloseTo(charged, 12);
          } finally {
            await second.close();
          }
        } finally {
          rmSync(state, { recursive: true, force: true });
        }
      }
      expect(pastTheLastWrite, `a batch's life writes at most ${MOST_WRITES} times`).toBe(true);
      expect(crashes).toBeGreaterThanOrEqual(4);
    },
    // A guard against a hang, in proportion to the work: a serve started a write (1-2 s alone; 15 s allowed for load 60).
    MOST_WRITES * 15_000,
  );
});

describe('one router serve per state folder', () => {
  it('a second on the same --state is refused while the first runs (its batches would be saved over); after kill -9 a new one starts', async () => {
    const state = mkdtempSync(join(tmpdir(), 'router-serve-lock-'));
    try {
      const first = await serve(state);
      const second = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', state], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      second.stderr!.on('data', (c) => (err += c));
      const code = await new Promise<number | null>((r) => second.on('exit', (c) => r(c)));
      expect(code).toBe(1);
      expect(err).toBe(`error: --state ${state} is in use by another router serve (process ${first.child.pid}): stop it, or give another --state\n`);
      first.child.kill('SIGKILL');
      await first.exited;
      const third = await serve(state);
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
      expect(readdirSync(state)).not.toContain('serve.lock');
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
