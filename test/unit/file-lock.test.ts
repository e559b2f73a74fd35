import { afterAll, describe, expect, it, vi } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { lutimesSync, mkdtempSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeHolder, holdLock, removeStale, takeLock } from '../../src/internal/file-lock.js';
import { withFileLock } from '../../src/internal/with-file-lock.js';
import { processStart } from '../../src/internal/process.js';
import { lockHost, lockText } from '../../src/internal/lock-text.js';
import { linkThere } from '../support/link-there.js';
import { SETTLE } from '../support/until.js';

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
    expect(linkThere(`${lock}.${dead}`)).toBe(false);
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
    expect(readlinkSync(lock)).toMatch(new RegExp(`^${process.pid}:\\d+@${lockHost()}(\\+[0-9a-f]{8})?(#\\d+)?$`));
    expect(linkThere(`${lock}.${dead}`)).toBe(false);
  });
});

describe('what a lock names: its process, when that started, and its machine', () => {
  it('a lock of a process on another machine is held: its pid cannot be checked from here (two containers on one volume)', () => {
    const lock = join(dir, 'host.lock');
    symlinkSync(`${dead}@another-container`, lock);
    expect(takeLock(lock)).toEqual({ holder: dead, host: 'another-container' });
    expect(readlinkSync(lock)).toBe(`${dead}@another-container`);
  });

  it('a lock whose pid is now another process\'s (it started later than the lock says) is taken over', () => {
    const lock = join(dir, 'reused.lock');
    symlinkSync(`${process.ppid}:1@${hostname()}`, lock);
    const taken = takeLock(lock);
    expect('release' in taken).toBe(true);
    if ('release' in taken) taken.release();
    expect(linkThere(lock)).toBe(false);
  });

  it('a lock of a live process of this machine, started when the lock says, is held; so is one of an older router (a pid only)', () => {
    const lock = join(dir, 'live.lock');
    symlinkSync(`${process.ppid}:${processStart(process.ppid)}@${hostname()}`, lock);
    expect(takeLock(lock)).toEqual({ holder: process.ppid });
    rmSync(lock);
    symlinkSync(String(process.ppid), lock);
    expect(takeLock(lock)).toEqual({ holder: process.ppid });
  });
});

describe('a lock of another pid namespace or machine, told alive by its refreshes', () => {
  // Only the lock's own mtime is compared: a holder elsewhere refreshes it every 2 s.
  const elsewhere = `1:5@${hostname()}#4026531999`;

  it('held while its holder refreshes it: holdLock refuses', async () => {
    const lock = join(dir, 'refreshed.lock');
    const holder = spawn(process.execPath, ['-e', `const fs = require('fs'); fs.symlinkSync(${JSON.stringify(elsewhere)}, ${JSON.stringify(lock)}); console.log('held'); setInterval(() => fs.lutimesSync(${JSON.stringify(lock)}, new Date(), new Date()), 200);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((r) => holder.stdout!.once('data', r));
      expect(() => holdLock(lock, (h) => new Error(`busy ${describeHolder(h)}`), () => {})).toThrow('busy process 1 of another process namespace');
      expect(readlinkSync(lock)).toBe(elsewhere);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((r) => holder.on('close', r));
    }
  });

  it('left unrefreshed (its holder killed): a short lock is taken over too', () => {
    const file = join(dir, 'settings.json');
    symlinkSync(elsewhere, `${file}.lock`);
    // Before: held until someone removed it by hand (FileLockTimeout after 10 s).
    expect(withFileLock(file, () => 42)).toBe(42);
    expect(linkThere(`${file}.lock`)).toBe(false);
  });
});

describe('a guard of another namespace left behind (its process killed while it removed a stale lock)', () => {
  const elsewhere = `1:5@${hostname()}#4026531999`;
  const long = new Date(Date.now() - 3_600_000);

  it('in front of a lock of another namespace, itself left: both are watched, then taken over', () => {
    const lock = join(dir, 'guarded.lock');
    const holder = `7:5@${hostname()}#4026531998`;
    symlinkSync(holder, lock);
    lutimesSync(lock, long, long);
    symlinkSync(elsewhere, `${lock}.7`);
    // Before: refused at once, naming the guard's process, until someone removed the guard by hand.
    const release = holdLock(lock, (h) => new Error(`busy ${describeHolder(h)}`), () => {});
    expect(readlinkSync(lock)).toMatch(new RegExp(`^${process.pid}:`));
    expect(linkThere(`${lock}.7`)).toBe(false);
    release();
  });

  it('in front of a stale lock of this machine: withFileLock takes it after the watch', () => {
    const file = join(dir, 'guarded.json');
    symlinkSync(String(dead), `${file}.lock`);
    symlinkSync(elsewhere, `${file}.lock.${dead}`);
    // Before: FileLockTimeout after 10 s, naming process 1.
    expect(withFileLock(file, () => 42)).toBe(42);
    expect(linkThere(`${file}.lock.${dead}`)).toBe(false);
  });
});

describe('a held lock taken over from its holder (paused past the watch), or removed by hand', () => {
  const own = new RegExp(`^${process.pid}:\\d+@${lockHost()}(\\+[0-9a-f]{8})?(#\\d+)?$`);
  const other = `1:5@${hostname()}#4026531999`;

  it('released, it is left to its taker; its holder is told at its next refresh', async () => {
    const lock = join(dir, 'taken-over.lock');
    const lost = vi.fn();
    const release = holdLock(lock, () => new Error('busy'), lost);
    expect(readlinkSync(lock)).toMatch(own);
    rmSync(lock);
    symlinkSync(other, lock);
    // Before: the holder went on unaware (two at work on one state), and its release removed the taker's lock.
    // Told, with the sentence to say, to its caller: the library writes nothing to this process's stderr
    // and does not end it (before: it wrote `error: …` there and exited 1 unless given its own `lost`).
    const written = vi.spyOn(process.stderr, 'write');
    await vi.waitFor(() => expect(lost).toHaveBeenCalledWith(other, `${lock} was taken over by ${other} while this process (${lockText()}) held it (not heard for 7 s: paused or suspended?)`), { ...SETTLE, interval: 100 });
    expect(written.mock.calls.filter(([t]) => String(t).includes('taken over'))).toEqual([]);
    written.mockRestore();
    release();
    expect(readlinkSync(lock)).toBe(other);
  });

  it('removed by hand while held, it is made again (a second holder cannot start beside this one)', async () => {
    const lock = join(dir, 'removed.lock');
    const lost = vi.fn();
    const release = holdLock(lock, () => new Error('busy'), lost);
    rmSync(lock);
    await vi.waitFor(() => expect(readlinkSync(lock)).toMatch(own), { ...SETTLE, interval: 100 });
    expect(() => holdLock(lock, () => new Error('busy'), () => {})).toThrow('busy');
    release();
    expect(linkThere(lock)).toBe(false);
    expect(lost).not.toHaveBeenCalled();
  });
});
