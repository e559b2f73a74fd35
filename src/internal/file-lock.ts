import { lstatSync, lutimesSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { processAlive, processStart } from './process.js';
import { atExit } from './exit-hooks.js';

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
 * This process's pid namespace (Linux: the number /proc/self/ns/pid names), '' where it cannot be read.
 * Containers that share a host name (`--network host`, a `hostname:` set alike) do not share pids.
 */
function pidSpace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '';
  } catch {
    return '';
  }
}

/**
 * A lock's text, `PID[:START]@HOST[#SPACE]`: the process that holds it, when it started
 * (processStart()), the machine it runs on and its pid namespace. A pid is known only in its
 * namespace (two containers on one volume, each one's serve pid 1), and may since be another
 * process's (a restarted container's serve is pid 1 again). A lock with a SPACE is refreshed by a
 * holder that keeps it (holdLock): from another machine or namespace, that is how it is told alive.
 */
let ownText: string | undefined;
let ownSpace: string | undefined;
function lockText(): string {
  if (ownText === undefined) {
    const start = processStart(process.pid);
    ownSpace = pidSpace();
    ownText = `${process.pid}${start ? `:${start}` : ''}@${hostname()}${ownSpace ? `#${ownSpace}` : ''}`;
  }
  return ownText;
}

/** Who holds a lock, as its text says; a lock of an older router names only a pid (of this machine). */
export interface LockHolder {
  pid: number;
  /** Set when the holder runs on another machine: it cannot be checked from here. */
  host?: string;
  /** Set when the holder runs in another pid namespace of this machine (another container): its pid is not ours to check. */
  elsewhere?: boolean;
}

/** "process PID", with its machine or namespace when that is another. */
export const describeHolder = (h: LockHolder) => `process ${h.pid}${h.host ? ` on ${h.host}` : h.elsewhere ? ' of another process namespace' : ''}`;

type Found = LockHolder & { start?: string; space?: string };

/** The lock's text (undefined once it is gone), and the holder it names (undefined: not a lock of ours). */
function readLock(lock: string): { text: string; holder?: Found } | undefined {
  let text: string;
  try {
    text = readlinkSync(lock);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : { text: '' };
  }
  const m = /^(\d+)(?::(\d+))?(?:@([^#]+)(?:#(\d+))?)?$/.exec(text);
  if (!m || !Number(m[1])) return { text };
  lockText();
  const host = m[3] === undefined || m[3] === hostname() ? undefined : m[3];
  const elsewhere = host === undefined && m[4] !== undefined && !!ownSpace && m[4] !== ownSpace ? true : undefined;
  return { text, holder: { pid: Number(m[1]), start: m[2], host, elsewhere, space: m[4] } };
}

/** A holder that still holds: on another machine or namespace (cannot be told), or this one's process, started when the lock says. */
function holds(h: Found): boolean {
  if (h.host !== undefined || h.elsewhere) return true;
  if (!processAlive(h.pid)) return false;
  const now = h.start === undefined ? undefined : processStart(h.pid);
  return now === undefined || now === h.start;
}

/**
 * Takes the lock `lock` if it is free, or left by a process that is gone (kill -9, or its pid now
 * another process's); else says which process holds it. The lock is a symbolic link whose target
 * is lockText(): made in one step, with the holder in it, and it takes no block of a full disk.
 */
export function takeLock(lock: string): { release: () => void } | { holder: number; host?: string; elsewhere?: boolean; refreshed?: boolean } {
  for (;;) {
    try {
      symlinkSync(lockText(), lock);
      return { release: () => releaseOwn(lock) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const found = readLock(lock);
    if (found === undefined) continue; // released since
    const h = found.holder;
    if (h && holds(h)) {
      const where = h.host ? { host: h.host } : h.elsewhere ? { elsewhere: true } : {};
      // Only a lock with a namespace is refreshed by its holder (an older router's is not).
      return { holder: h.pid, ...where, ...(h.space && (h.host || h.elsewhere) ? { refreshed: true } : {}) };
    }
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

/** How often a held lock is refreshed, and how long one that cannot be checked by its pid is watched unchanged before it is taken as left. */
const REFRESH_MS = 2_000;
const LEFT_MS = 7_000;

/** When the lock was last refreshed (its link's mtime), and what it says; undefined once it is gone. */
function touched(lock: string): { text: string; at: number } | undefined {
  try {
    return { text: readlinkSync(lock), at: lstatSync(lock).mtimeMs };
  } catch {
    return undefined;
  }
}

/** Removes `lock` if it still names this process: one taken over since (its holder here not heard for LEFT_MS) is the taker's. */
function releaseOwn(lock: string): void {
  try {
    if (readlinkSync(lock) !== lockText()) return;
  } catch {
    return;
  }
  removeLink(lock);
}

/**
 * Refreshes `lock` while it is ours (its link's mtime: a holder on another machine or namespace
 * watches it). A refresh that fails (a network volume's hiccup) is tried again at the next; a lock
 * removed by hand is made again (else a second holder could start beside this one). One that names
 * another process was taken over (this one not heard for LEFT_MS: paused, suspended): `lost` is told.
 */
function keepFresh(lock: string, lost: (text: string) => void): NodeJS.Timeout {
  const timer = setInterval(() => {
    let text: string;
    try {
      text = readlinkSync(lock);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        try {
          symlinkSync(lockText(), lock);
        } catch {
          // Taken by another since (read at the next refresh), or not to be made now: tried again.
        }
      }
      return;
    }
    if (text !== lockText()) {
      clearInterval(timer);
      return lost(text);
    }
    try {
      const now = new Date();
      lutimesSync(lock, now, now);
    } catch {
      // Tried again at the next refresh.
    }
  }, REFRESH_MS);
  timer.unref();
  return timer;
}

/**
 * What a holder whose lock was taken over does by default: it stops at once, as a kill -9 would
 * (nothing more written), so two never go on working on what the lock guards.
 */
function stopOnLost(lock: string, text: string): never {
  process.stderr.write(`error: ${lock} was taken over by ${text} while this process (${lockText()}) held it (not heard for ${LEFT_MS / 1000} s: paused or suspended?); stopping, so two do not work on one state\n`);
  process.exit(1);
}

/**
 * Watches a lock whose holder cannot be checked by its pid (another machine or pid namespace):
 * 'alive' once it was refreshed while watched, 'left' once unchanged for LEFT_MS (its holder killed, a
 * restarted container's old serve), else 'wait'. Only the lock's own times are compared, never two
 * machines' clocks.
 */
class Watch {
  private seen: { text: string; at: number; since: number } | undefined;

  look(lock: string): 'alive' | 'left' | 'wait' {
    const now = touched(lock);
    if (!now) return 'wait';
    const seen = this.seen;
    if (!seen || seen.text !== now.text) this.seen = { ...now, since: Date.now() };
    else if (now.at !== seen.at) return 'alive';
    else if (Date.now() - seen.since > LEFT_MS) return 'left';
    return 'wait';
  }

  /** Removes the lock found left; false when another process holds the guard (it is taking it over). */
  remove(lock: string, holder: number): boolean {
    const text = this.seen?.text;
    this.seen = undefined;
    return removeStale(lock, holder, text) === undefined;
  }
}

/**
 * Holds `lock` while this process works (until the returned release, or its exit), refreshing it;
 * `busy` makes the error to throw when another live process holds it. A lock of another machine or
 * pid namespace is watched (Watch): refreshed, it is held; left, it is taken over. `lost` is told
 * when this process's lock was taken over so (by default it stops the process); released, a lock
 * that names another is left to it.
 */
export function holdLock(lock: string, busy: (holder: LockHolder) => Error, lost: (text: string) => void = (text) => stopOnLost(lock, text)): () => void {
  const watch = new Watch();
  for (;;) {
    const taken = takeLock(lock);
    if ('release' in taken) {
      const timer = keepFresh(lock, lost);
      const release = () => {
        clearInterval(timer);
        releaseOwn(lock);
      };
      const forget = atExit(release);
      return () => {
        forget();
        release();
      };
    }
    const holder = { pid: taken.holder, host: taken.host, elsewhere: taken.elsewhere };
    if (!taken.refreshed) throw busy(holder);
    const seen = watch.look(lock);
    if (seen === 'alive' || (seen === 'left' && !watch.remove(lock, taken.holder))) throw busy(holder);
    if (seen === 'wait') Atomics.wait(pause, 0, 0, 100);
  }
}

/**
 * For a process waiting on a lock (withFileLock, the budgets'): true once the lock takeLock found held
 * on another machine or pid namespace stayed unrefreshed LEFT_MS and was removed (take it again).
 */
export function leftBehind(): (lock: string, taken: { holder: number; refreshed?: boolean }) => boolean {
  const watch = new Watch();
  return (lock, taken) => !!taken.refreshed && watch.look(lock) === 'left' && watch.remove(lock, taken.holder);
}

/**
 * Runs `change` holding `<file>.lock`, so that processes that read, change and write the same
 * file (two `router config set` in a script) take turns and none loses the other's change.
 * Synchronous: the changes it guards are. A lock of another machine or pid namespace left for
 * LEFT_MS is taken over (Watch).
 */
export function withFileLock<T>(file: string, change: () => T, waitMs = 10_000): T {
  const lock = `${file}.lock`;
  const until = Date.now() + waitMs;
  const left = leftBehind();
  for (;;) {
    const taken = takeLock(lock);
    if ('release' in taken) {
      try {
        return change();
      } finally {
        taken.release();
      }
    }
    if (left(lock, taken)) continue;
    if (Date.now() > until) throw new FileLockTimeout(`cannot change ${file}: ${describeHolder({ pid: taken.holder, host: taken.host, elsewhere: taken.elsewhere })} has held its lock for ${waitMs / 1000} s; try again, or remove ${lock} if no router runs`);
    Atomics.wait(pause, 0, 0, 5);
  }
}
