import { readdirSync, renameSync, rmSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeWhole } from '../../internal/write-whole.js';
import { clearLeftMoves } from '../../internal/lock-mark.js';
import { failedWriteOf } from '../../internal/system-errors.js';

/**
 * Test hook for crash safety: with ROUTER_EMULATOR_CRASH_AFTER_WRITES=N the process kills itself
 * (SIGKILL, as kill -9 would) right after its Nth durable write. Never set outside tests.
 */
const crashAfter = Number(process.env.ROUTER_EMULATOR_CRASH_AFTER_WRITES ?? 0);
let durableWrites = 0;

/** Counts a durable write (a rename or an fsync that makes state survive a crash). */
export function durableWriteDone(): void {
  durableWrites++;
  if (crashAfter > 0 && durableWrites === crashAfter) process.kill(process.pid, 'SIGKILL');
}

/**
 * Test hook: with ROUTER_EMULATOR_CRASH_AT=POINT:N the process kills itself (SIGKILL) the Nth time
 * it passes the named point of a save (store.ts and charge-journal.ts name them). Never set outside tests.
 */
const [crashPointName, crashPointAt] = (process.env.ROUTER_EMULATOR_CRASH_AT ?? '').split(':');
let crashPointsPassed = 0;

export function crashPoint(name: string): void {
  if (name === crashPointName && ++crashPointsPassed === Number(crashPointAt)) process.kill(process.pid, 'SIGKILL');
}

/** Test hooks, set by in-process tests only: a file system that fails writes, and a pause around an async save's rename. */
export const storageHooks: { full?: (file: string) => boolean; beforeLaterRename?: () => Promise<void>; afterLaterRename?: () => Promise<void> } = {};

/** Throws as a full disk would when a test's hook says the disk is full. */
export function failWriteForTests(file: string): void {
  if (storageHooks.full?.(file)) throw Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC', syscall: 'write', path: file });
}

/** Writes a file durably and whole (temp file, fsync, rename; mode 0600), counted for the crash hook. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  failWriteForTests(path);
  writeWhole(path, data, true);
  durableWriteDone();
}

/** The temp file of writeFileAtomicLater for `path`. */
const laterTemp = (path: string) => join(dirname(path), `.${basename(path)}.${process.pid}.later`);

/** Whether a process `pid` runs (EPERM: it does, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

/**
 * Removes the temp files of `path` a kill -9 left mid-save (writeWhole's `.<name>.<pid>`, this file's
 * `.<name>.<pid>.later` and `.later.over`, and writeWhole's temp of that): those of a process that
 * no longer runs. Left alone, each crash left a copy of the state beside it for good. A file of this
 * process's own pid is the one its next save writes over. Best effort: what cannot be removed stays.
 */
export function removeStaleTemps(path: string): void {
  const folder = dirname(path);
  const name = basename(path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const temp = new RegExp(`^\\.\\.?${name}\\.(\\d+)(\\.later(\\.over(\\.\\d+)?)?)?$`);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  // And what a release of `router serve`'s lock (serve.lock, in this folder) killed midway left.
  clearLeftMoves(folder, names);
  for (const n of names) {
    const pid = Number(temp.exec(n)?.[1] ?? 0);
    if (!pid || pid === process.pid || running(pid)) continue;
    try {
      rmSync(join(folder, n), { force: true });
    } catch {
      /* a read-only folder: the next start tries again */
    }
  }
}

/**
 * writeFileAtomicSync while a writeFileAtomicLater of the same path may be under way (its rename
 * queued off the loop, where nothing can stop it). The data first takes the place of that write's
 * temp file, so its rename, whenever it runs, moves this newer data; then it is written as usual,
 * and the temp file removed (a rename after that finds nothing, and is dropped). So an older save
 * can never land over this one, at any point a kill -9 stops it.
 */
export function writeFileAtomicSyncOverLater(path: string, data: string): void {
  const temp = laterTemp(path);
  failWriteForTests(path);
  writeWhole(`${temp}.over`, data, true);
  try {
    renameSync(`${temp}.over`, temp);
  } catch (err) {
    rmSync(`${temp}.over`, { force: true });
    throw failedWriteOf(err, path);
  }
  writeFileAtomicSync(path, data);
  rmSync(temp, { force: true });
}

/**
 * writeFileAtomicSync with its slow part (the write, the rename and the fsyncs) off the event loop: the
 * data goes to a temp file of its own, and `current()`, asked on the loop once it is on disk, says
 * whether it still replaces `path` (false: a write since made it stale, and it is dropped). The rename
 * too is off the loop (on a busy disk a renameSync held it for tens of ms); a save made meanwhile
 * goes through writeFileAtomicSyncOverLater, so the rename then moves that save's data, or nothing.
 * Resolves true when `current()` turned false during the rename (a save was made meanwhile).
 */
export async function writeFileAtomicLater(path: string, data: string, current: () => boolean): Promise<boolean> {
  const temp = laterTemp(path);
  try {
    failWriteForTests(path);
    const file = await open(temp, 'w', 0o600);
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    if (!current()) {
      await rm(temp, { force: true });
      return false;
    }
    await storageHooks.beforeLaterRename?.();
    try {
      await rename(temp, path);
    } finally {
      await storageHooks.afterLaterRename?.();
    }
  } catch (err) {
    // Its temp file taken and removed by a newer save: that save is on disk.
    if ((err as { code?: string }).code === 'ENOENT' && !current()) return false;
    rmSync(temp, { force: true });
    throw failedWriteOf(err, path);
  }
  durableWriteDone();
  const overtaken = !current();
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return overtaken;
}
