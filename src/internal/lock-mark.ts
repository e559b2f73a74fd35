import { linkSync, lstatSync, readlinkSync, renameSync, symlinkSync } from 'node:fs';
import { uptime } from 'node:os';
import { join } from 'node:path';
import { processAlive } from './process.js';
import { lockHooks, lockText, removeLink, sharedVolume } from './lock-text.js';

/*
 * A lock's guard for routers older than its text (`<lock>.0`), and removing a lock or a guard only while it is
 * the one meant (removeIf).
 *
 * Routers that read only a bare pid take `<lock>.0` (exclusive, naming their pid), read the lock again, and
 * remove it if its text is not a pid: this router's is not. So it makes `.0` before its lock (markFirst); one a
 * killed process left is removed first, with no lock there, as those routers remove it (clearLeftMark). What is
 * left open: a `.0` naming a live process with no lock beside it is either such a router's guard, held between
 * its two reads (it removes the lock this router makes then), or a mark whose pid is now another process's
 * (after a reboot; a container's serve as pid 1, read in another namespace or on another machine). A bare pid
 * says neither when its process started nor where it runs, so the two cannot be told apart here, and waiting
 * for the first would wait forever on the second (no serve would start after a reboot): the lock is made and
 * the mark replaced after it (markForOlder), and such a router caught in those microseconds can remove it. The
 * text of `.0` cannot say more: they read any other as garbage, a guard left by no one, and remove it
 * (docs/gateway-store.md).
 */

const exists = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** A link's text: undefined once gone, '' for what is not a link (a lock's garbage, as readLock reads it). */
function linkText(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : '';
  }
}

/** The name removeIf moves `path` to in process `pid`: one a process killed before its unlink leaves (clearLeftMark, clearLeftMoves remove it). */
const movedName = (path: string, pid: number) => `${path}~${pid}`;

/** A lock's, its mark's, a guard's or a turn's moved name (movedName; markForOlder's new mark too): `….lock~PID`, `….lock.N~PID`, `….lock.next~PID`. */
const MOVED = /\.lock(?:\.next)?(?:\.\d+)?~(\d+)$/;

/** How long ago a moved name was made, by this machine's clock, for one of a process gone from here to be left: one is there for microseconds. */
const MOVED_LEFT_MS = 60_000;

/**
 * Removes, of `names` (of folder `dir`, read by a caller for its own ends: no folder is read for this alone), the
 * moved names a process killed between its rename and its unlink left (a kill at the unlink of a released mark
 * leaves `<lock>.0~PID`, a few bytes, for good). Only a link whose process is gone from here, moved a minute ago
 * or more: a process of another pid namespace on this disk holds one for microseconds. On a volume other machines
 * may write, only one moved before this boot began (its pid may be another machine's).
 */
export function clearLeftMoves(dir: string, names: readonly string[]): void {
  for (const name of names) {
    const pid = Number(MOVED.exec(name)?.[1] ?? 0);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    const path = join(dir, name);
    try {
      const s = lstatSync(path);
      const now = lockHooks.now?.() ?? Date.now();
      const left = sharedVolume(path) ? now - uptime() * 1000 : now - MOVED_LEFT_MS;
      // Its ctime: when it was moved there (a rename sets it), where its mtime is the lock's last refresh.
      if (s.isSymbolicLink() && s.ctimeMs < left) removeLink(path);
    } catch {
      // Gone, or not removable now: left as it is.
    }
  }
}

/**
 * Removes `path` (a lock, a mark) if it names `text`, and never one another process made in its place
 * meanwhile (a read, then an unlink, could remove that): it is moved to a name of this process's alone,
 * then read; one that is not `text` is put back (by a link, never over one made since) and false returned.
 * Read first, so that one seen to be another's is never moved: only one replaced in the moment between is
 * (put back fails if a third is made while it is away).
 */
export function removeIf(path: string, text: string): boolean {
  if (linkText(path) !== text) return false;
  lockHooks.beforeRemove?.(path);
  const moved = movedName(path, process.pid);
  try {
    renameSync(path, moved);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  const now = linkText(moved);
  if (now !== text) {
    try {
      linkSync(moved, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') renameSync(moved, path);
    }
  }
  removeLink(moved);
  return now === text;
}

/**
 * Removes `lock` if it still names this process (one taken over since, its holder here not heard for a
 * while, is the taker's), then its mark for older routers: the lock first, so that an older router never
 * finds it there unguarded (it would remove it, and this process then the lock it took).
 */
export function releaseOwn(lock: string): void {
  try {
    if (removeIf(lock, lockText())) unmarkForOlder(lock);
  } catch {
    // Not ours to remove, or not removable now: left as it is.
  }
}

/**
 * Routers before PID:START@HOST locks (a bare pid) read any other text as a lock left by no one and
 * remove it, but only once they hold `<lock>.0`, the guard they take for it; one that names a live
 * pid makes them see the lock as held by it. So a holder of a lock keeps that guard too, naming its
 * pid. One left by a holder killed before is replaced in one step (the lock is ours: no one else's).
 */
export function markForOlder(lock: string): void {
  const marker = `${lock}.0`;
  try {
    symlinkSync(String(process.pid), marker);
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return;
  }
  const next = `${lock}.0~${process.pid}`;
  try {
    symlinkSync(String(process.pid), next);
    renameSync(next, marker);
  } catch {
    try {
      removeLink(next);
    } catch {
      // Nothing of ours left to remove.
    }
  }
}

/**
 * Makes the mark of a lock this process holds again if it is gone, and never replaces one: an older router
 * releases its guard by unlinking `<lock>.0` whoever's it is by then (markForOlder replaced it while it was held),
 * and the next one would find the lock unguarded, remove it as garbage and take it.
 */
export function remarkForOlder(lock: string): void {
  try {
    symlinkSync(String(process.pid), `${lock}.0`);
  } catch {
    // There (its own, or an older router's guard), or not to be made now: looked at again at the next refresh.
  }
}

/**
 * Made before the lock, so that an older router finds the lock's guard held from the first moment the
 * lock is there (made after, an older one could take the guard in between and remove the new lock): true
 * when made. One that a process now gone left, while there is no lock, is removed first, as older routers
 * remove it (clearLeftMark). One of a live process is not replaced before the lock is ours (markForOlder
 * does, after): an older router holding it then removes a lock it reads (docs/gateway-store.md says why
 * that is left).
 */
export function markFirst(lock: string): boolean {
  for (let cleared = false; ; cleared = true) {
    try {
      symlinkSync(String(process.pid), `${lock}.0`);
      return true;
    } catch {
      if (cleared || !clearLeftMark(lock)) return false;
    }
  }
}

/**
 * Removes `<lock>.0` when it names a process gone and there is no lock, holding `<lock>.0.<pid>` (a bare
 * pid) as older routers do for it: they and this router never both remove it, and one made since is not.
 */
function clearLeftMark(lock: string): boolean {
  const marker = `${lock}.0`;
  let pid: number;
  try {
    pid = Number(readlinkSync(marker));
  } catch {
    return false;
  }
  // With a lock there, it is its holder's mark (of another machine, maybe), or left with it: removed once the lock is (takeLock).
  if (!pid || pid === process.pid || processAlive(pid) || exists(lock)) return false;
  const guard = `${marker}.${pid}`;
  try {
    symlinkSync(String(process.pid), guard);
  } catch {
    return false; // another removes it
  }
  try {
    if (!removeIf(marker, String(pid))) return false;
    clearMoved(lock, pid);
    return true;
  } catch {
    return false;
  } finally {
    removeLink(guard);
  }
}

/**
 * Removes what process `pid`, now gone, left moved away by a removeIf it was killed in (between its rename and
 * its unlink): its lock (its release: its mark, left with no lock, is how that is told) or its mark.
 */
function clearMoved(lock: string, pid: number): void {
  for (const path of [movedName(lock, pid), movedName(`${lock}.0`, pid)]) {
    try {
      removeLink(path);
    } catch {
      // Not removable now: left as it is.
    }
  }
}

/** Removes the guard markForOlder made, if it names this process (never one made since: removeIf). */
export function unmarkForOlder(lock: string): void {
  try {
    removeIf(`${lock}.0`, String(process.pid));
  } catch {
    // Not removable now: left as it is.
  }
}
