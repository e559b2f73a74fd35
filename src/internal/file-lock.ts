import { readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { processAlive, processStart } from './process.js';

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

/**
 * A lock's text, `PID[:START]@HOST`: the process that holds it, when it started (processStart()) and
 * the machine it runs on. A pid is known only on its machine (two containers on one volume, each one's
 * serve pid 1), and may since be another process's (a restarted container's serve is pid 1 again).
 */
let ownText: string | undefined;
function lockText(): string {
  if (ownText === undefined) {
    const start = processStart(process.pid);
    ownText = `${process.pid}${start ? `:${start}` : ''}@${hostname()}`;
  }
  return ownText;
}

/** Who holds a lock, as its text says; a lock of an older router names only a pid (of this machine). */
export interface LockHolder {
  pid: number;
  /** Set when the holder runs on another machine: it cannot be checked from here. */
  host?: string;
}

/** "process PID", with its machine when that is another. */
export const describeHolder = (h: LockHolder) => `process ${h.pid}${h.host ? ` on ${h.host}` : ''}`;

/** The lock's text (undefined once it is gone), and the holder it names (undefined: not a lock of ours). */
function readLock(lock: string): { text: string; holder?: LockHolder & { start?: string } } | undefined {
  let text: string;
  try {
    text = readlinkSync(lock);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : { text: '' };
  }
  const m = /^(\d+)(?::(\d+))?(?:@(.+))?$/.exec(text);
  if (!m || !Number(m[1])) return { text };
  const host = m[3] === undefined || m[3] === hostname() ? undefined : m[3];
  return { text, holder: { pid: Number(m[1]), start: m[2], host } };
}

/** A holder that still holds: on another machine (cannot be told), or this machine's process, started when the lock says. */
function holds(h: LockHolder & { start?: string }): boolean {
  if (h.host !== undefined) return true;
  if (!processAlive(h.pid)) return false;
  const now = h.start === undefined ? undefined : processStart(h.pid);
  return now === undefined || now === h.start;
}

/**
 * Takes the lock `lock` if it is free, or left by a process that is gone (kill -9, or its pid now
 * another process's); else says which process holds it. The lock is a symbolic link whose target
 * is lockText(): made in one step, with the holder in it, and it takes no block of a full disk.
 */
export function takeLock(lock: string): { release: () => void } | { holder: number; host?: string } {
  for (;;) {
    try {
      symlinkSync(lockText(), lock);
      return { release: () => removeLink(lock) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const found = readLock(lock);
    if (found === undefined) continue; // released since
    if (found.holder && holds(found.holder)) return found.holder.host ? { holder: found.holder.pid, host: found.holder.host } : { holder: found.holder.pid };
    const busy = removeStale(lock, found.holder?.pid ?? 0, found.text);
    if (busy) return { holder: busy };
  }
}

/**
 * Removes `lock` if it still names the dead `holder` (as `text`, when known). Two processes that both
 * saw it dead must not both remove it (the second would remove the lock the first has just taken):
 * only the one that holds `<lock>.<holder>` may, and it reads the lock again first. That guard is
 * itself a lock (one left by a process killed while holding it is taken over the same way). Returns
 * the pid of a live process holding the guard, if one does.
 */
export function removeStale(lock: string, holder: number, text?: string): number | undefined {
  const guard = takeLock(`${lock}.${holder}`);
  if ('holder' in guard) return guard.holder;
  try {
    const now = readLock(lock);
    if (now && (text === undefined ? (now.holder?.pid ?? 0) === holder : now.text === text)) removeLink(lock);
  } finally {
    guard.release();
  }
  return undefined;
}

/**
 * Holds `lock` while this process works (until the returned release, or its exit); `busy` makes
 * the error to throw when another live process holds it.
 */
export function holdLock(lock: string, busy: (holder: LockHolder) => Error): () => void {
  const taken = takeLock(lock);
  if ('holder' in taken) throw busy({ pid: taken.holder, host: taken.host });
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
    if (Date.now() > until) throw new FileLockTimeout(`cannot change ${file}: ${describeHolder({ pid: taken.holder, host: taken.host })} has held its lock for ${waitMs / 1000} s; try again, or remove ${lock} if no router runs`);
    Atomics.wait(pause, 0, 0, 5);
  }
}
