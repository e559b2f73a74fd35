import { readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { processAlive } from './process.js';

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Another process kept the lock past the wait: a failure to say in words, not a system error. */
export class FileLockTimeout extends Error {
  override name = 'FileLockTimeout';
}

/** Removes a lock link, if still there: unlink, as rmSync would load its folder remover (~0.5 ms of a start). */
function removeLink(lock: string): void {
  try {
    unlinkSync(lock);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** The pid a lock names (0: not a lock of ours), undefined once it is gone. */
function holderOf(lock: string): number | undefined {
  try {
    return Number(readlinkSync(lock)) || 0;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 0;
  }
}

/**
 * Takes the lock `lock` if it is free, or left by a process that is gone (kill -9); else says
 * which process holds it. The lock is a symbolic link to our pid: made in one step, with the pid
 * in it, and it takes no block of a full disk.
 */
export function takeLock(lock: string): { release: () => void } | { holder: number } {
  for (;;) {
    try {
      symlinkSync(String(process.pid), lock);
      return { release: () => removeLink(lock) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = holderOf(lock);
    if (holder === undefined) continue; // released since
    if (holder && processAlive(holder)) return { holder };
    const busy = removeStale(lock, holder);
    if (busy) return { holder: busy };
  }
}

/**
 * Removes `lock` if it still names the dead `holder`. Two processes that both saw it dead must not
 * both remove it (the second would remove the lock the first has just taken): only the one that
 * holds `<lock>.<holder>` may, and it reads the lock again first. That guard is itself a lock
 * (one left by a process killed while holding it is taken over the same way). Returns the pid of
 * a live process holding the guard, if one does.
 */
export function removeStale(lock: string, holder: number): number | undefined {
  const guard = takeLock(`${lock}.${holder}`);
  if ('holder' in guard) return guard.holder;
  try {
    if (holderOf(lock) === holder) removeLink(lock);
  } finally {
    guard.release();
  }
  return undefined;
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
    if (Date.now() > until) throw new FileLockTimeout(`cannot change ${file}: process ${taken.holder} has held its lock for ${waitMs / 1000} s; try again, or remove ${lock} if no router runs`);
    Atomics.wait(pause, 0, 0, 5);
  }
}
