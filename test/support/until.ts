/**
 * Waiting for a state, not for a time: a test that signals a process when it is ready (its
 * request seen, its file open) holds on a loaded machine, where a fixed sleep ends too soon.
 */
import { readdirSync, readlinkSync } from 'node:fs';

/**
 * Polls `ok` every 10 ms until it holds or `ms` have passed; whether it holds. The bound only ends a wait for a state
 * that never comes: 30 s, as a loaded machine took over 15 s to start a router and have it send its request.
 */
export async function until(ok: () => boolean, ms = 30_000): Promise<boolean> {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return ok();
}

/**
 * The bound of a vi.waitFor, whose default (1 s) a loaded machine passes while it writes a file or hears a
 * hang-up: the wait still ends as soon as the state holds.
 */
export const SETTLE = { timeout: 30_000, interval: 20 };

/** Whether process `pid` has `path` open (Linux: /proc/PID/fd). */
export function hasOpen(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** Whether any process has `path` open: for a command started in a terminal, whose pid the test does not have. */
export function openByAny(path: string): boolean {
  return readdirSync('/proc').some((pid) => /^\d+$/.test(pid) && hasOpen(Number(pid), path));
}

/**
 * Checks `ok` on every turn of the event loop, not every 10 ms: for a state that lasts a few turns only (an answer
 * made a slice a turn, seen while under way). Whether it held before `ms` passed.
 */
export async function untilThisTurn(ok: () => boolean, ms = 30_000): Promise<boolean> {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setImmediate(r));
  return ok();
}
