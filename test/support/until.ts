/**
 * Waiting for a state, not for a time: a test that signals a process when it is ready (its
 * request seen, its file open) holds on a loaded machine, where a fixed sleep ends too soon.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { TestRunner } from 'vitest';
import { TEST_BOUND_MS } from './test-bound.js';

/** What a wait leaves of its test's bound: time to fail saying what it waited for, before the test's bound ends it unsaid. */
const WAIT_MARGIN_MS = 10_000;

/**
 * The most a wait inside a test may take: what is left of the running test's bound, less a margin; in a hook (no test
 * runs), the hook's whole bound less the margin. A wait bound of its own (was 30 s) is shorter than the test's, and at
 * load a test failed on its wait for a state that came, well within the test's bound: the bound only ends a wait for
 * a state that never comes, and the test's bound is the one bound for that.
 */
export function waitBound(): number {
  const test = TestRunner.getCurrentTest();
  const started = test?.result?.startTime;
  if (started === undefined) return TEST_BOUND_MS - WAIT_MARGIN_MS;
  return Math.max(started + (test!.timeout ?? TEST_BOUND_MS) - WAIT_MARGIN_MS - Date.now(), 0);
}

/** Polls `ok` every 10 ms until it holds or `ms` (the rest of the test's bound) have passed; whether it holds. */
export async function until(ok: () => boolean, ms = waitBound()): Promise<boolean> {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  return ok();
}

/** Asks `check` every 10 ms until it holds; throws naming `what` when it has not within `ms` (the rest of the test's bound). */
export async function waitForState(check: () => boolean | Promise<boolean>, what: string, ms = waitBound()): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The options of a vi.waitFor, whose default bound (1 s) a loaded machine passes while it writes a file or hears a
 * hang-up: the wait still ends as soon as the state holds. `timeout` is read at each wait: the rest of the test's bound.
 */
export const SETTLE = {
  get timeout(): number {
    return waitBound();
  },
  interval: 20,
};

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
export async function untilThisTurn(ok: () => boolean, ms = waitBound()): Promise<boolean> {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setImmediate(r));
  return ok();
}
