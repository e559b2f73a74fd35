import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { BIN } from '../helpers.js';
import { SETTLE } from '../support/until.js';

// Two `router serve` started at the same moment on one state folder: one serves, the other is
// refused in words, and the state (keys, credits) is the one the server that ran left.
interface Started {
  pid: number;
  info?: { api_root: string; api_key: string; management_key: string };
  code?: number | null;
  stderr: string;
  stop(): Promise<void>;
}

function start(state: string): Promise<Started> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--json', '--state', state], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const started: Partial<Started> = {};
  let stderr = '';
  child.stderr!.on('data', (c) => (started.stderr = stderr += c));
  void exited.then((code) => (started.code = code));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(Object.assign(started, { pid: child.pid!, info: JSON.parse(line), stderr, stop }));
    });
    void exited.then((code) => resolve({ pid: child.pid!, code, stderr, stop }));
  });
}

const credits = async (info: NonNullable<Started['info']>) => {
  const res = await fetch(`${info.api_root}/v1/credits`, { headers: { authorization: `Bearer ${info.management_key}` } });
  return ((await res.json()) as { data: { total_credits: number; total_usage: number } }).data;
};

describe('two router serve on one state folder at once', () => {
  it('one serves, the other is refused naming it; credits spent through the first are kept', async () => {
    const state = mkdtempSync(join(tmpdir(), 'router-serve-twice-'));
    try {
      let usage = 0;
      let keys: string | undefined;
      for (let round = 0; round < 2; round++) {
        const both = await Promise.all([start(state), start(state)]);
        const running = both.filter((s) => s.info);
        const refused = both.filter((s) => !s.info);
        expect(running).toHaveLength(1);
        const [winner] = running as [Started & { info: NonNullable<Started['info']> }];
        expect(refused[0]).toMatchObject({ code: 1, stderr: `error: --state ${state} is in use by another router serve (process ${winner.pid}): stop it, or give another --state\n` });
        // Same keys every round: the refused one wrote no state of its own.
        keys ??= winner.info.api_key;
        expect(winner.info.api_key).toBe(keys);
        expect((await credits(winner.info)).total_usage).toBeCloseTo(usage, 10);
        const res = await fetch(`${winner.info.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${winner.info.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: `round ${round}` }] }) });
        const cost = ((await res.json()) as { usage: { cost: number } }).usage.cost;
        expect(cost).toBeGreaterThan(0);
        usage += cost;
        await winner.stop();
      }
      expect(readdirSync(state)).not.toContain('serve.lock');
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});

describe('a router serve whose lock was taken over', () => {
  it('stops at once, and leaves the lock to its taker: two never serve one state', async () => {
    const state = mkdtempSync(join(tmpdir(), 'router-serve-taken-'));
    try {
      const first = await start(state);
      expect(first.info).toBeDefined();
      const lock = join(state, 'serve.lock');
      expect(readlinkSync(lock)).toMatch(new RegExp(`^${first.pid}:`));
      // What a serve in another container on this volume writes once it watched this one's lock
      // unrefreshed for 7 s (this one's container paused, its machine suspended).
      const taker = `1:5@${hostname()}#4026531999`;
      rmSync(lock);
      symlinkSync(taker, lock);
      // Before: it went on serving (and saving) beside its taker, and removed the taker's lock when stopped.
      // At its next look at the lock, within the test's bound (15 s was a time a loaded machine can pass).
      await vi.waitFor(() => expect(first.code).toBe(1), SETTLE);
      expect(first.stderr).toContain(`error: ${lock} was taken over by ${taker} while this process (${first.pid}:`);
      expect(readlinkSync(lock)).toBe(taker);
      await expect(fetch(`${first.info!.api_root}/v1/models`)).rejects.toThrow();
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
