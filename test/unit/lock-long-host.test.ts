import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readlinkSync, rmSync, statfsSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takeLock } from '../../src/internal/file-lock.js';
import { hostNameForTests, lockHost } from '../../src/internal/lock-text.js';
import { linkThere } from '../support/link-there.js';

// A machine with a long host name (a cloud VM's, a pod's): 40 characters, as the lock code sees it.
const LONG = 'ip-10-200-123-45.eu-west-3.compute.inter';
// Set through the lock code's seam, not vi.mock: test files share their workers' modules (isolate: false).
beforeAll(() => hostNameForTests(LONG));
afterAll(() => hostNameForTests(undefined));

const dir = mkdtempSync(join(tmpdir(), 'router-lock-host-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
const taken = (lock: string) => {
  const t = takeLock(lock);
  if (!('release' in t)) throw new Error(`not taken: ${JSON.stringify(t)}`);
  return t.release;
};

describe('a host name over 20 characters in a lock', () => {
  it('is shortened (its start and a hash), so the lock text stays under the 60 bytes an ext4 inode keeps', () => {
    expect(lockHost()).toMatch(/^ip-10-200-1~[0-9a-f]{8}$/);
    expect(lockHost('short-host')).toBe('short-host');
    const lock = join(dir, 'own.lock');
    const release = taken(lock);
    const text = readlinkSync(lock);
    expect(text).toContain(`@${lockHost()}`);
    expect(Buffer.byteLength(text)).toBeLessThan(60);
    // On ext4, a link whose text is in its inode takes no block (a full disk cannot refuse it).
    if (statfsSync(dir).type === 0xef53) expect(lstatSync(lock).blocks).toBe(0);
    release();
  });

  it('a lock of this machine, as written now or whole (a router before), has its pid checked here: one of a dead process is taken at once', () => {
    for (const host of [lockHost(), LONG]) {
      const lock = join(dir, `dead-${host.length}.lock`);
      symlinkSync(`${dead}:1@${host}`, lock);
      taken(lock)();
      expect(linkThere(lock)).toBe(false);
    }
  });

  it('another machine whose long name starts alike is another machine: held', () => {
    const other = `${LONG.slice(0, 11)}9.eu-west-3.compute.internal`;
    expect(lockHost(other)).not.toBe(lockHost());
    const lock = join(dir, 'other.lock');
    symlinkSync(`${dead}:1@${lockHost(other)}`, lock);
    expect(takeLock(lock)).toEqual({ holder: dead, host: lockHost(other) });
  });
});
