import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { processAlive } from './process.js';

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Another process kept the lock past the wait: a failure to say in words, not a system error. */
export class FileLockTimeout extends Error {
  override name = 'FileLockTimeout';
}

/** The pid a lock file names, 0 while its maker has not written it yet, undefined once it is gone. */
function holderOf(lock: string): number | undefined {
  try {
    return Number(readFileSync(lock, 'utf8')) || 0;
  } catch {
    return undefined;
  }
}

/** Age in milliseconds of a file (0 when it is gone: not stale). */
function ageOf(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * Takes the lock file `lock` (it holds our pid) if it is free, or left by a process that is gone
 * (kill -9); else says which process holds it (0: one that is making it right now).
 */
export function takeLock(lock: string): { release: () => void } | { holder: number } {
  for (;;) {
    let fd: number;
    try {
      fd = openSync(lock, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = holderOf(lock);
      if (holder === undefined) continue; // released since the open
      // No pid a second after it was made: its maker died between making and writing it.
      const stale = holder ? !processAlive(holder) : ageOf(lock) > 1000;
      if (!stale) return { holder };
      rmSync(lock, { force: true });
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
    } finally {
      closeSync(fd);
    }
    return { release: () => rmSync(lock, { force: true }) };
  }
}

/**
 * Holds `lock` while this process works (until the returned release, or its exit); `busy` makes
 * the error to throw when another live process holds it.
 */
export function holdLock(lock: string, busy: (holder: number) => Error): () => void {
  const taken = takeLock(lock);
  if ('holder' in taken) throw busy(taken.holder);
  process.once('exit', taken.release);
  return () => {
    process.off('exit', taken.release);
    taken.release();
  };
}

/**
 * Runs `change` holding `<file>.lock`, so that processes that read, change and write the same
 * file (two `router config set` in a script) take turns and none loses the other's change.
 * Synchronous: the changes it guards are.
 */
export function withFileLock<T>(file: string, change: () => T, waitMs = 10_000): T {
  const lock = `${file}.lock`;
  const until = Date.now() + waitMs;
  for (;;) {
    const taken = takeLock(lock);
    if ('release' in taken) {
      try {
        return change();
      } finally {
        taken.release();
      }
    }
    if (Date.now() > until) throw new FileLockTimeout(`cannot change ${file}: process ${taken.holder || '(unknown)'} has held its lock for ${waitMs / 1000} s; try again, or remove ${lock} if no router runs`);
    Atomics.wait(pause, 0, 0, 5);
  }
}
