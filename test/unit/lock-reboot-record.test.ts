import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendFileSync, chmodSync, statSync, writeFileSync, lutimesSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { takeLock } from '../../src/internal/file-lock.js';
import { bootIdForTests, lockHooks, lockHost, lockText } from '../../src/internal/lock-text.js';
import { bootRecord } from '../../src/internal/boot-record.js';
import { processStart } from '../../src/internal/process.js';

// Through the lock code's seams, not vi.mock (test files share their workers' modules, isolate: false): a
// folder read as a volume two machines share (nfs), this machine's boot (as after a reboot), and the file
// that lists this machine's boots.
const dir = mkdtempSync(join(tmpdir(), 'router-lock-boots-'));
const nfs = join(dir, 'nfs');
mkdirSync(nfs);
const saved = { ...lockHooks };
beforeAll(() => {
  lockHooks.shared = (path) => path.startsWith(nfs);
  bootRecord.file = join(dir, 'boots');
});
afterAll(() => {
  Object.assign(lockHooks, saved);
  bootRecord.file = undefined;
  bootIdForTests(undefined);
  rmSync(dir, { recursive: true, force: true });
});
const space = lockText().match(/#\d+$/)?.[0] ?? '';
const taken = (lock: string) => {
  const t = takeLock(lock);
  if (!('release' in t)) throw new Error(`not taken: ${JSON.stringify(t)}`);
  return t.release;
};
/** A lock of this host name made in `boot` by a process alive here now (started when the lock says). */
const otherText = (boot: string) => `${process.ppid}:${processStart(process.ppid)}@${lockHost()}+${boot}${space}`;
/** The lock last refreshed a minute before this machine's boot (as one a crash left before a reboot is). */
const beforeBoot = (lock: string) => {
  const t = new Date(Date.now() - uptime() * 1000 - 60_000);
  lutimesSync(lock, t, t);
};

describe('a lock of this host name from another boot, on a volume other machines may share', () => {
  it('made by this machine before a reboot (a crash left it) is taken at once: its boot is listed on this machine\'s disk', () => {
    bootIdForTests('aaaaaaa1');
    const lock = join(nfs, 'serve.lock');
    taken(lock); // never released: the process is killed, its lock and mark left
    beforeBoot(lock);
    expect(readlinkSync(lock)).toContain(`@${lockHost()}+aaaaaaa1`);
    expect(readFileSync(join(dir, 'boots'), 'latin1')).toBe('aaaaaaa1\n');
    bootIdForTests('bbbbbbb2'); // the machine boots again; the same pid is alive, as the lock says
    // One takeLock, which never waits: before, it was another machine's, refreshed, watched for 7 s.
    const release = taken(lock);
    expect(readlinkSync(lock)).toContain(`@${lockHost()}+bbbbbbb2`);
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.pid));
    expect(readFileSync(join(dir, 'boots'), 'latin1')).toBe('aaaaaaa1\nbbbbbbb2\n');
    release();
    expect(readdirSync(nfs)).toEqual([]);
  });

  it('of a boot this machine never listed (another machine of this host name: a clone, one image\'s container) stays held', () => {
    bootIdForTests('ccccccc3');
    const lock = join(nfs, 'clone.lock');
    symlinkSync(otherText('ddddddd4'), lock);
    beforeBoot(lock);
    expect(takeLock(lock)).toMatchObject({ holder: process.ppid, host: `${lockHost()} (another boot)` });
    expect(readlinkSync(lock)).toBe(otherText('ddddddd4'));
  });

  it('of a listed boot but refreshed since this boot began (a clone of this disk, made while that boot ran) stays held', () => {
    bootIdForTests('abcdef08');
    const lock = join(nfs, 'disk-clone.lock');
    taken(join(nfs, 'noted.lock')); // lists abcdef08
    bootIdForTests('abcdef09');
    symlinkSync(otherText('abcdef08'), lock); // made and refreshed now, by the machine still in that boot
    expect(takeLock(lock)).toMatchObject({ holder: process.ppid, host: `${lockHost()} (another boot)` });
    beforeBoot(lock);
    expect('release' in takeLock(lock)).toBe(true);
  });

  it('a list another user could have written is not trusted', () => {
    const record = join(dir, 'boots-open');
    appendFileSync(record, 'eeeeeee5\n');
    chmodSync(record, 0o666);
    bootRecord.file = record;
    try {
      bootIdForTests('fffffff6');
      const lock = join(nfs, 'planted.lock');
      symlinkSync(otherText('eeeeeee5'), lock);
      beforeBoot(lock);
      expect(takeLock(lock)).toMatchObject({ holder: process.ppid, host: `${lockHost()} (another boot)` });
      chmodSync(record, 0o600);
      expect('release' in takeLock(lock)).toBe(true);
    } finally {
      bootRecord.file = join(dir, 'boots');
    }
  });

  it('a record grown past 64 KiB (garbage, not a line a boot) is neither read whole nor written to', () => {
    const record = join(dir, 'boots-huge');
    writeFileSync(record, `eeeeeee7\n${'x'.repeat(1 << 20)}\n`, { mode: 0o600 });
    bootRecord.file = record;
    try {
      bootIdForTests('fffffff8');
      const lock = join(nfs, 'huge.lock');
      symlinkSync(otherText('eeeeeee7'), lock);
      beforeBoot(lock);
      // Before: the whole MiB was read into this process (every process that found such a lock), and trusted.
      expect(takeLock(lock)).toMatchObject({ holder: process.ppid, host: `${lockHost()} (another boot)` });
      taken(join(nfs, 'huge-noted.lock'))();
      expect(statSync(record).size).toBe(9 + (1 << 20) + 1);
    } finally {
      bootRecord.file = join(dir, 'boots');
    }
  });

  it('a link planted where the record goes is neither followed to be written nor trusted', () => {
    const target = join(dir, 'planted-target');
    writeFileSync(target, 'eeeeeee9\n', { mode: 0o600 });
    const record = join(dir, 'boots-link');
    symlinkSync(target, record);
    bootRecord.file = record;
    try {
      bootIdForTests('fffffffa');
      const lock = join(nfs, 'linked.lock');
      symlinkSync(otherText('eeeeeee9'), lock);
      beforeBoot(lock);
      expect(takeLock(lock)).toMatchObject({ holder: process.ppid, host: `${lockHost()} (another boot)` });
      taken(join(nfs, 'linked-noted.lock'))();
      expect(readFileSync(target, 'latin1')).toBe('eeeeeee9\n');
    } finally {
      bootRecord.file = join(dir, 'boots');
    }
  });

  it('a lock on a disk of this machine alone lists no boot', () => {
    bootIdForTests('99999997');
    taken(join(dir, 'local.lock'))();
    expect(readFileSync(join(dir, 'boots'), 'latin1')).not.toContain('99999997');
  });
});
