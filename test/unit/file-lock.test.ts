import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeStale, takeLock } from '../../src/internal/file-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'router-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dead = spawnSync(process.execPath, ['-e', '0']).pid!;

describe('taking over a stale lock', () => {
  it('a process that saw the lock held by a dead process never removes it once another has taken it', () => {
    const lock = join(dir, 'a.lock');
    // Another process took the lock over since this one read it: it now names a live process.
    symlinkSync(String(process.ppid), lock);
    expect(removeStale(lock, dead)).toBeUndefined();
    expect(readlinkSync(lock)).toBe(String(process.ppid));
    expect(existsSync(`${lock}.${dead}`)).toBe(false);
  });

  it('while a live process is taking over a lock, another waits for it rather than removing the lock too', async () => {
    const lock = join(dir, 'b.lock');
    symlinkSync(String(dead), lock);
    const other = spawn('sleep', ['5']);
    try {
      symlinkSync(String(other.pid), `${lock}.${dead}`);
      expect(takeLock(lock)).toEqual({ holder: other.pid });
      expect(readlinkSync(lock)).toBe(String(dead));
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.on('close', r));
    }
    // Its taker killed in turn: both are taken over, and no guard is left.
    const taken = takeLock(lock);
    expect('release' in taken).toBe(true);
    expect(readlinkSync(lock)).toBe(String(process.pid));
    expect(existsSync(`${lock}.${dead}`)).toBe(false);
  });
});
