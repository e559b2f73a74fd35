import { afterAll, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeHolder, holdLock, takeLock } from '../../src/internal/file-lock.js';
import { withFileLock } from '../../src/internal/with-file-lock.js';
import { processAlive, processStart } from '../../src/internal/process.js';
import { onLocalDisk } from '../../src/internal/local-volume.js';
import { lockHooks, lockHost } from '../../src/internal/lock-text.js';
import { bootRecord } from '../../src/internal/boot-record.js';
import { until } from '../support/until.js';
import { linkThere } from '../support/link-there.js';

// A volume two machines may share (nfs...), and a moment right after a lock's link is made (another
// process runs then: `after` is called once, for `path`), through the lock code's seam: not vi.mock, as
// test files share their workers' modules (isolate: false).
const disk = { shared: false };
const made = { path: '', after: undefined as undefined | (() => void) };
lockHooks.shared = () => disk.shared;
lockHooks.afterLink = (path) => {
  if (path !== made.path) return;
  const after = made.after;
  made.after = undefined;
  after?.();
};

// Routers of different versions on one state folder, and machines of one host name on one volume.
const dir = mkdtempSync(join(tmpdir(), 'router-lock-compat-'));
bootRecord.file = join(dir, 'boots'); // the boots this machine lists (boot-record.ts): not /var/tmp's
afterAll(() => {
  bootRecord.file = undefined;
  rmSync(dir, { recursive: true, force: true });
  lockHooks.shared = undefined;
  lockHooks.afterLink = undefined;
});
const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
const read = (path: string) => {
  try {
    return readFileSync(path, 'latin1').trim();
  } catch {
    return '';
  }
};
const boot = read('/proc/sys/kernel/random/boot_id').slice(0, 8);
const space = /\[(\d+)\]/.exec((() => { try { return readlinkSync('/proc/self/ns/pid'); } catch { return ''; } })())?.[1] ?? '';
const otherBoot = boot ? `${boot.slice(0, 7)}${boot.endsWith('0') ? '1' : '0'}` : '';
const taken = (lock: string) => {
  const t = takeLock(lock);
  if (!('release' in t)) throw new Error(`not taken: ${JSON.stringify(t)}`);
  return t.release;
};

// ---- FIXTURE: the lock code of routers before locks named more than a pid (src/internal/file-lock.ts
// at 8f131c6, before 6078c23), copied as it was: a lock is a link to a bare pid; any other text reads as 0,
// "not a lock of ours", and is removed by whoever holds the guard `<lock>.0`.
function oldRemoveLink(lock: string): void {
  try {
    unlinkSync(lock);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
function oldHolderOf(lock: string): number | undefined {
  try {
    return Number(readlinkSync(lock)) || 0;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 0;
  }
}
function oldTakeLock(lock: string): { release: () => void } | { holder: number } {
  for (;;) {
    try {
      symlinkSync(String(process.pid), lock);
      return { release: () => oldRemoveLink(lock) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = oldHolderOf(lock);
    if (holder === undefined) continue;
    if (holder && processAlive(holder)) return { holder };
    const busy = oldRemoveStale(lock, holder);
    if (busy) return { holder: busy };
  }
}
function oldRemoveStale(lock: string, holder: number): number | undefined {
  const guard = oldTakeLock(`${lock}.${holder}`);
  if ('holder' in guard) return guard.holder;
  try {
    if (oldHolderOf(lock) === holder) oldRemoveLink(lock);
  } finally {
    guard.release();
  }
  return undefined;
}
// ---- FIXTURE: how routers of e9243d5 up to stop 53 (ce69a13) parse a lock's text (readLock of lock-text.ts),
// and those of 6078c23 before them: undefined is "not a lock of ours", removed as left by no one.
function stop53Parse(text: string): { pid: number; host?: string; space?: string } | undefined {
  const m = /^(\d+)(?::(\d+))?(?:@([^#]+)(?:#(\d+))?)?$/.exec(text);
  if (!m || !Number(m[1])) return undefined;
  return { pid: Number(m[1]), host: m[3] === undefined || m[3] === hostname() ? undefined : m[3], space: m[4] };
}
function v6078Parse(text: string): { pid: number; host?: string } | undefined {
  const m = /^(\d+)(?::(\d+))?(?:@(.+))?$/.exec(text);
  if (!m || !Number(m[1])) return undefined;
  return { pid: Number(m[1]), host: m[3] === undefined || m[3] === hostname() ? undefined : m[3] };
}
// ---- end of fixtures

describe('a lock of this router and the routers before it, on one state folder', () => {
  it('a router that reads only a bare pid sees a held lock as held, and leaves it', () => {
    const lock = join(dir, 'held-by-new.lock');
    const release = taken(lock);
    const text = readlinkSync(lock);
    // Before: the old code removed this lock as garbage and took it (both ran).
    expect(oldTakeLock(lock)).toEqual({ holder: process.pid });
    expect(readlinkSync(lock)).toBe(text);
    release();
    expect(linkThere(lock)).toBe(false);
    expect(linkThere(`${lock}.0`)).toBe(false);
  });

  it('the same for a lock held for a process\'s work (holdLock) and a short one (withFileLock)', () => {
    const held = join(dir, 'serve-like.lock');
    const release = holdLock(held, () => new Error('busy'), () => {});
    expect(oldTakeLock(held)).toEqual({ holder: process.pid });
    release();
    const file = join(dir, 'config.json');
    expect(withFileLock(file, () => oldTakeLock(`${file}.lock`))).toEqual({ holder: process.pid });
    expect(linkThere(`${file}.lock`)).toBe(false);
    expect(linkThere(`${file}.lock.0`)).toBe(false);
  });

  it("a holder's guard an old router's release removed (it held `.0` as the lock was made) is made again at the next refresh", async () => {
    const lock = join(dir, 'guard-released.lock');
    // An old router holds the guard (to remove a lock it read as left) as this one makes its lock: replaced after it.
    const guard = oldTakeLock(`${lock}.0`);
    if (!('release' in guard)) throw new Error(`guard not taken: ${JSON.stringify(guard)}`);
    const release = holdLock(lock, () => new Error('busy'), () => {});
    guard.release(); // the old code unlinks `.0`, whoever's it is by then
    expect(linkThere(`${lock}.0`)).toBe(false);
    // Before: never made again, and the next old router took the guard, removed this lock as garbage and took it.
    expect(await until(() => linkThere(`${lock}.0`))).toBe(true);
    expect(oldTakeLock(lock)).toEqual({ holder: process.pid });
    release();
    expect(linkThere(lock)).toBe(false);
    expect(linkThere(`${lock}.0`)).toBe(false);
  });

  it('a lock this router left (its process killed) is taken over by the old one, and by this one', () => {
    const lock = join(dir, 'left-by-new.lock');
    symlinkSync(`${dead}:1@${hostname()}${boot ? `+${boot}` : ''}${space ? `#${space}` : ''}`, lock);
    symlinkSync(String(dead), `${lock}.0`);
    const old = oldTakeLock(lock);
    expect('release' in old).toBe(true);
    expect(readlinkSync(lock)).toBe(String(process.pid));
    if ('release' in old) old.release();
    symlinkSync(`${dead}:1@${hostname()}${boot ? `+${boot}` : ''}${space ? `#${space}` : ''}`, lock);
    symlinkSync(String(dead), `${lock}.0`);
    const release = taken(lock);
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.pid));
    release();
    expect(linkThere(`${lock}.0`)).toBe(false);
  });

  it('an old router that looks in the moment this router has made its lock finds the lock held: its guard is made first', () => {
    const lock = join(dir, 'moment.lock');
    let old: ReturnType<typeof oldTakeLock> | undefined;
    made.path = lock;
    made.after = () => (old = oldTakeLock(lock));
    const release = taken(lock);
    // Before: the mark came after the lock, and the old router removed the lock in between and took it.
    expect(old).toEqual({ holder: process.pid });
    expect(readlinkSync(lock)).toMatch(new RegExp(`^${process.pid}:`));
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.pid));
    release();
    expect(linkThere(`${lock}.0`)).toBe(false);
  });

  it('where a killed process left `.0` and no lock, an old router that looks right after this one made its lock finds it held', () => {
    const lock = join(dir, 'left-mark.lock');
    symlinkSync(String(dead), `${lock}.0`);
    let old: ReturnType<typeof oldTakeLock> | undefined;
    made.path = lock;
    made.after = () => (old = oldTakeLock(lock));
    const release = taken(lock);
    // Before: the left guard was replaced only after the lock was made; the old router removed it (its
    // process gone), took it, removed the new lock as garbage and took the lock: both ran.
    expect(old).toEqual({ holder: process.pid });
    expect(readlinkSync(lock)).toMatch(new RegExp(`^${process.pid}:`));
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.pid));
    release();
    expect(readdirSync(dir).filter((n) => n.startsWith('left-mark.lock'))).toEqual([]);
  });

  it('a `.0` naming a live process that holds no lock (its pid reused) does not keep the lock from being taken', () => {
    const lock = join(dir, 'reused-mark.lock');
    symlinkSync(String(process.ppid), `${lock}.0`);
    const release = taken(lock);
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.pid));
    release();
    expect(linkThere(`${lock}.0`)).toBe(false);
  });

  it('one that finds the lock held leaves no guard of its own behind, and a holder\'s guard as it was', () => {
    const lock = join(dir, 'held-old.lock');
    symlinkSync(String(process.ppid), lock);
    expect(takeLock(lock)).toEqual({ holder: process.ppid });
    expect(linkThere(`${lock}.0`)).toBe(false);
    rmSync(lock);
    const release = taken(lock);
    expect(takeLock(lock)).toEqual({ holder: process.pid });
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.pid));
    release();
  });

  it("an old router's lock (a bare pid) is read by this one: held while its process lives, taken once it is gone", () => {
    const lock = join(dir, 'old.lock');
    symlinkSync(String(process.ppid), lock);
    expect(takeLock(lock)).toEqual({ holder: process.ppid });
    rmSync(lock);
    symlinkSync(String(dead), lock);
    taken(lock)();
    expect(linkThere(lock)).toBe(false);
  });

  it('the routers that parse PID:START@HOST[#SPACE] read the text as a lock, held (never as garbage)', () => {
    const lock = join(dir, 'parsed.lock');
    const release = taken(lock);
    const text = readlinkSync(lock);
    release();
    const seen = stop53Parse(text);
    expect(seen?.pid).toBe(process.pid);
    // With a boot id, they read HOST+BOOT as another machine's name: held (and watched, as it is refreshed), never checked by pid.
    if (boot) expect(seen).toMatchObject({ host: `${lockHost()}+${boot}` });
    expect(v6078Parse(text)?.pid).toBe(process.pid);
  });
});

describe.skipIf(!boot)('a lock names its machine\'s boot: one host name, two machines (or a reboot)', () => {
  it('the lock text carries the boot id after the host name', () => {
    const lock = join(dir, 'boot.lock');
    const release = taken(lock);
    expect(readlinkSync(lock)).toBe(`${process.pid}:${processStart(process.pid)}@${lockHost()}+${boot}${space ? `#${space}` : ''}`);
    release();
  });

  it('of this host name and this boot, its pid is checked here: one of a dead process is taken over at once', () => {
    const lock = join(dir, 'same-boot.lock');
    symlinkSync(`${dead}:1@${hostname()}+${boot}${space ? `#${space}` : ''}`, lock);
    taken(lock)();
    expect(linkThere(lock)).toBe(false);
  });

  it('of this host name and another boot, on a disk of this machine alone: this machine before a reboot, taken at once', () => {
    expect(onLocalDisk(join(dir, 'x'))).toBe(true); // the test folder (ext4, tmpfs, overlay...)
    const lock = join(dir, 'rebooted.lock');
    // A pid that is alive here now, started when the lock says: still not the holder, who ran before the reboot.
    symlinkSync(`${process.ppid}:${processStart(process.ppid)}@${hostname()}+${otherBoot}${space ? `#${space}` : ''}`, lock);
    symlinkSync(String(process.ppid), `${lock}.0`);
    // One takeLock: it never waits, so taken here is taken without the watch (LEFT_MS) a refreshed lock of another machine gets.
    const release = taken(lock);
    expect(readlinkSync(lock)).toMatch(new RegExp(`^${process.pid}:`));
    expect(readlinkSync(`${lock}.0`)).toBe(String(process.pid));
    release();
    expect(linkThere(lock)).toBe(false);
    // And by holdLock at its first try: it pauses (Atomics.wait) only while it watches a lock.
    symlinkSync(`${dead}:1@${hostname()}+${otherBoot}${space ? `#${space}` : ''}`, lock);
    const paused = vi.spyOn(Atomics, 'wait').mockImplementation(() => {
      throw new Error('holdLock paused to watch the lock');
    });
    try {
      holdLock(lock, () => new Error('busy'), () => {})();
    } finally {
      paused.mockRestore();
    }
    expect(linkThere(lock)).toBe(false);
  });

  it('of this host name and another boot, on a shared volume: another machine\'s, held (watched while refreshed)', () => {
    disk.shared = true;
    try {
      const lock = join(dir, 'other-boot.lock');
      // A pid that is alive here, started when the lock says: on the old text (no boot) it was taken for this machine's process.
      const text = `${process.ppid}:${processStart(process.ppid)}@${hostname()}+${otherBoot}${space ? `#${space}` : ''}`;
      symlinkSync(text, lock);
      const busy = takeLock(lock);
      expect(busy).toEqual({ holder: process.ppid, host: `${hostname()} (another boot)`, ...(space ? { refreshed: true } : {}) });
      expect(describeHolder({ pid: process.ppid, host: `${hostname()} (another boot)` })).toBe(`process ${process.ppid} on ${hostname()} (another boot)`);
      expect(readlinkSync(lock)).toBe(text);
      // Dead here too: still not this machine's to judge by pid.
      rmSync(lock);
      symlinkSync(`${dead}:1@${hostname()}+${otherBoot}${space ? `#${space}` : ''}`, lock);
      expect(takeLock(lock)).toMatchObject({ holder: dead, host: `${hostname()} (another boot)` });
    } finally {
      disk.shared = false;
    }
  });
});
