import { lutimesSync, readlinkSync } from 'node:fs';
import { holds, linkLock, lockText, readLock, touched, type LockHolder } from './lock-text.js';
import { markFirst, markForOlder, releaseOwn, remarkForOlder, removeIf, unmarkForOlder } from './lock-mark.js';
import { sleep } from './sleep.js';
import { atExit } from './exit-hooks.js';
import { FileLockTimeout } from './lock-timeout.js';

export { describeHolder, type LockHolder } from './lock-text.js';

const pause = new Int32Array(new SharedArrayBuffer(4));

export { FileLockTimeout };

/**
 * Who holds a lock takeLock could not take. `refreshed`: its holder, on another machine or pid
 * namespace, refreshes it (Watch tells whether it still does). `watch`: the path to watch, when
 * what is in the way is the guard of a stale lock (removeStale) rather than the lock itself.
 */
export interface Busy {
  holder: number;
  host?: string;
  elsewhere?: boolean;
  refreshed?: boolean;
  watch?: string;
}

/**
 * Takes the lock `lock` if it is free, or left by a process that is gone (kill -9, or its pid now
 * another process's); else says which process holds it. The lock is a symbolic link whose target
 * is lockText(): made in one step, with the holder in it, and it takes no block of a full disk.
 * A `guard` (removeStale's) is held for microseconds: it gets no mark for older routers.
 */
export function takeLock(lock: string, guard = false): { release: () => void } | Busy {
  for (;;) {
    const marked = !guard && markFirst(lock);
    try {
      linkLock(lock);
      if (!guard && !marked) markForOlder(lock);
      return { release: () => releaseOwn(lock) };
    } catch (err) {
      if (marked) unmarkForOlder(lock);
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
    if (busy) return busy;
  }
}

/**
 * Removes `lock` if it still names the dead `holder` (as `text`, when known). Two processes that both
 * saw it dead must not both remove it (the second would remove the lock the first has just taken):
 * only the one that holds `<lock>.<holder>` may, and it reads the lock again first. That guard is
 * itself a lock (one left by a process killed while holding it is taken over the same way: by its
 * pid here; from another machine or namespace, once Watch sees it left, as a guard is held for
 * microseconds). Returns who holds the guard, if another does.
 */
export function removeStale(lock: string, holder: number, text?: string): Busy | undefined {
  const guard = `${lock}.${holder}`;
  const taken = takeLock(guard, true);
  if ('holder' in taken) return taken.refreshed && !taken.watch ? { ...taken, watch: guard } : taken;
  try {
    const now = readLock(lock);
    if (now && (text === undefined ? (now.holder?.pid ?? 0) === holder : now.text === text)) removeIf(lock, now.text);
  } finally {
    taken.release();
  }
  return undefined;
}

/** How often a held lock is refreshed, and how long one that cannot be checked by its pid is watched unchanged before it is taken as left. */
const REFRESH_MS = 2_000;
const LEFT_MS = 7_000;

/**
 * Refreshes `lock` while it is ours (its link's mtime: a holder on another machine or namespace
 * watches it). A refresh that fails (a network volume's hiccup) is tried again at the next; a lock
 * removed by hand is made again (else a second holder could start beside this one), and so is its mark for
 * older routers. One that names another process was taken over (this one not heard for LEFT_MS): `lost` is told.
 */
function keepFresh(lock: string, lost: LockLost): NodeJS.Timeout {
  const timer = setInterval(() => {
    let text: string;
    try {
      text = readlinkSync(lock);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        try {
          linkLock(lock);
          markForOlder(lock);
        } catch {
          // Taken by another since (read at the next refresh), or not to be made now: tried again.
        }
      }
      return;
    }
    if (text !== lockText()) {
      clearInterval(timer);
      return lost(text, lostWords(lock, text));
    }
    try {
      lutimesSync(lock, new Date(), new Date());
    } catch {
      // Tried again at the next refresh.
    }
    remarkForOlder(lock);
  }, REFRESH_MS);
  timer.unref();
  return timer;
}

/**
 * What a holder whose lock was taken over is told: the lock's new text, and a sentence saying it
 * (this is library code: the caller says it where it speaks, and decides whether to stop).
 */
export type LockLost = (text: string, said: string) => void;

function lostWords(lock: string, text: string): string {
  return `${lock} was taken over by ${text} while this process (${lockText()}) held it (not heard for ${LEFT_MS / 1000} s: paused or suspended?)`;
}

/**
 * Watches a lock whose holder cannot be checked by its pid (another machine or pid namespace), or
 * the guard of a stale one (Busy.watch): 'alive' when it was refreshed while watched, 'left' once
 * unchanged for LEFT_MS (its holder killed, a restarted container's old serve), else 'wait'. Only
 * the lock's own times are compared, never two machines' clocks.
 */
class Watch {
  private seen: { path: string; text: string; at: number; since: number } | undefined;
  /** The guard of the lock found left, held by another machine or namespace: watched in turn. */
  private guard: Busy | undefined;
  /** The lock as it was when found left, while its guard is watched. */
  private lockSeen: { text: string; at: number } | undefined;

  /** What is watched: the guard takeLock found in the way, else the one remove() did, else the lock. */
  private target(taken: Busy, lock: string): { path: string; holder: number; guard: boolean } {
    const t = taken.watch ? taken : (this.guard ?? taken);
    return { path: t.watch ?? lock, holder: t.holder, guard: !!t.watch };
  }

  look(taken: Busy, lock: string): 'alive' | 'left' | 'wait' {
    const { path, guard } = this.target(taken, lock);
    const now = touched(path);
    if (!now) {
      this.guard = undefined;
      return 'wait';
    }
    const seen = this.seen;
    this.seen = { path, ...now, since: Date.now() };
    if (!seen || seen.path !== path || seen.text !== now.text) return 'wait';
    // A guard is never refreshed: one made again since is another guard, watched anew.
    if (now.at !== seen.at) return guard ? 'wait' : 'alive';
    this.seen = seen;
    return Date.now() - seen.since > LEFT_MS ? 'left' : 'wait';
  }

  /**
   * Removes what was found left: 'busy' when a live process of this machine holds its guard (it is
   * taking it over); 'wait' when a guard of another machine or namespace is in the way (watched next).
   * The lock found left before its guard is removed with it, if unchanged since.
   */
  remove(taken: Busy, lock: string): 'removed' | 'busy' | 'wait' {
    const { path, holder } = this.target(taken, lock);
    const [seen, before] = [this.seen, this.guard && !taken.watch ? this.lockSeen : undefined];
    this.seen = this.guard = this.lockSeen = undefined;
    const busy = removeStale(path, holder, seen?.text);
    if (!busy) {
      const now = before && touched(lock);
      if (now && now.text === before!.text && now.at === before!.at) removeStale(lock, taken.holder, now.text);
      return 'removed';
    }
    if (!busy.refreshed) return 'busy';
    [this.guard, this.lockSeen] = [busy, taken.watch ? undefined : seen];
    return 'wait';
  }
}

/** The lock held from now on: refreshed, released by the function returned or at this process's exit. */
function kept(lock: string, lost: LockLost): () => void {
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

/** One try of holdLock: true once taken, the holder to refuse, or undefined to look again after a pause. */
function tryHold(lock: string, watch: Watch): true | LockHolder | undefined {
  const taken = takeLock(lock);
  if ('release' in taken) return true;
  const holder = { pid: taken.holder, host: taken.host, elsewhere: taken.elsewhere };
  if (!taken.refreshed) return holder;
  const seen = watch.look(taken, lock);
  if (seen === 'alive' || (seen === 'left' && watch.remove(taken, lock) === 'busy')) return holder;
  return undefined;
}

const HOLD_PAUSE_MS = 100;

/**
 * Holds `lock` while this process works (until the returned release, or its exit), refreshing it;
 * `busy` makes the error to throw when another live process holds it. A lock of another machine or
 * pid namespace is watched (Watch): refreshed, it is held; left, it is taken over. `lost` is told
 * when this process's lock was taken over so (the CLI's serve stops; a library's caller refuses to go on); released, a lock
 * that names another is left to it. Its waits block this thread: for a process of its own (serve, the
 * CLI); a library's caller uses holdLockAsync.
 */
export function holdLock(lock: string, busy: (holder: LockHolder) => Error, lost: LockLost): () => void {
  const watch = new Watch();
  for (;;) {
    const got = tryHold(lock, watch);
    if (got === true) return kept(lock, lost);
    if (got) throw busy(got);
    Atomics.wait(pause, 0, 0, HOLD_PAUSE_MS);
  }
}

/** holdLock with its waits on timers: the event loop of the program that calls it runs meanwhile. */
export async function holdLockAsync(lock: string, busy: (holder: LockHolder) => Error, lost: LockLost): Promise<() => void> {
  const watch = new Watch();
  for (;;) {
    const got = tryHold(lock, watch);
    if (got === true) return kept(lock, lost);
    if (got) throw busy(got);
    await sleep(HOLD_PAUSE_MS);
  }
}

/**
 * For a process waiting on a lock (withFileLock, the budgets'): true once the lock takeLock found held
 * on another machine or pid namespace (or its guard) stayed unrefreshed LEFT_MS and was removed (take it again).
 */
export function leftBehind(): (lock: string, taken: Busy) => boolean {
  const watch = new Watch();
  return (lock, taken) => !!taken.refreshed && watch.look(taken, lock) === 'left' && watch.remove(taken, lock) === 'removed';
}
