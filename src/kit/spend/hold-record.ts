/**
 * A hold's record on disk (budget-hold.ts), and what becomes of the hold of a process that is gone:
 * stale, and where its call may have been charged, a line in the ledger.
 */
import { renameSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { processAlive, processStart } from '../../internal/process.js';
import { appendUsage, type UsageRecord } from './ledger.js';
import { randomHex } from '../../internal/random-hex.js';
import { keepUnheard, keptSend, type SentCreate } from './sent-create.js';

/** A hold older than this is stale whatever its process: a call does not run for a day. */
export const HOLD_MAX_AGE_MS = 24 * 3_600_000;
/** A batch's hold lasts past its 24-hour window, until its cost is in the ledger (or this long). */
export const BATCH_HOLD_MAX_AGE_MS = 48 * 3_600_000;

/** The name's start of the hold of a call whose cost could not be written to the ledger. */
export const UNRECORDED = 'unrecorded-';

/** What a hold says of its call, for the ledger line it becomes if its process is killed before the call's cost is known. */
export interface HoldCall {
  command?: string | undefined;
  model?: string | undefined;
  api_root?: string | undefined;
  /**
   * Held for batches not yet made: each made is held apart (toBatch, share) and its cost recorded once
   * seen ended, and a create whose answer was lost is found by the job that sent it, so a killed
   * process's hold of them is let go, not counted.
   */
  batch?: boolean | undefined;
  /** A batch create's record once it was sent (sent-create.ts): while it says the answer was never heard, the batch may exist, and the hold is kept. */
  sent?: SentCreate | undefined;
  /** SHA-256 of the API key the call is sent with (as the keys API names a key): a line left without a generation id is settled by that key's spend. */
  key_hash?: string | undefined;
}

export interface HoldRecord extends HoldCall {
  profile: string;
  usd: number;
  /** The call's cost is in the ledger: what is held is only kept for the command's further calls. */
  settled?: boolean | undefined;
  pid: number;
  /** The process's start (processStart), where it can be read. */
  started?: string | undefined;
  /** ISO 8601, when the hold was placed. */
  time: string;
  /** ISO 8601, when the call under way was held for, where the hold covered earlier calls (a tool loop's rounds) and none is under way beside it. */
  since?: string | undefined;
  /** The generation id of the call under way, once its answer began, and its endpoint: a killed call's line can be reconciled by them. */
  id?: string | undefined;
  endpoint?: string | undefined;
}

/** Whether a hold no longer holds anything: its process is gone, or it is older than a day. */
export function isStale(rec: Partial<HoldRecord>, now = Date.now()): boolean {
  if (typeof rec.pid !== 'number' || typeof rec.usd !== 'number' || typeof rec.time !== 'string') return true;
  const age = now - Date.parse(rec.time);
  if (!(age <= HOLD_MAX_AGE_MS)) return true;
  if (!processAlive(rec.pid)) return true;
  const started = processStart(rec.pid);
  return rec.started !== undefined && started !== undefined && started !== rec.started;
}

/** Whether a stale hold's bound is counted (orphaned()): its call may have been charged, and no ledger line says so. */
export function orphanBound(rec: Partial<HoldRecord>, now: number): rec is Partial<HoldRecord> & { usd: number; profile: string } {
  return !rec.settled && !rec.batch && typeof rec.usd === 'number' && rec.usd > 0 && typeof rec.profile === 'string' && now - Date.parse(rec.time ?? '') <= HOLD_MAX_AGE_MS;
}

/** What a stale hold keeps counted once orphaned() has seen it (read without removing anything: `router usage`, a dry run). */
export function orphanKeeps(env: NodeJS.ProcessEnv, rec: Partial<HoldRecord>, now: number): number {
  if (rec.batch) return !rec.settled && typeof rec.usd === 'number' && rec.usd > 0 && keptSend(env, rec) ? rec.usd : 0;
  return orphanBound(rec, now) ? boundCost(rec.usd) : 0;
}

/**
 * The hold of a process killed (kill -9) while its call was under way: the service may have charged
 * what the call streamed before the kill, which no ledger line says. Its bound, the most it could
 * have cost, goes to the ledger (unsettled), so the budgets count it; where the ledger takes no line,
 * it is held for a day instead (what is so held is returned). A hold a day old, or settled (its cost is
 * in the ledger), is only removed. `dead` false: the hold's process is this one, alive (a call failed unanswered now).
 */
export function orphaned(env: NodeJS.ProcessEnv, path: string, rec: Partial<HoldRecord>, now: number, dead = true): number {
  if (rec.batch) return !rec.settled && keepUnheard(env, path, rec) ? rec.usd! : 0;
  if (!orphanBound(rec, now)) return 0;
  if (appendUsage(env, unsettledLine(rec, dead ? lastSignOfLife(path, rec, now) : now)) === undefined) return 0;
  try {
    renameSync(path, join(dirname(path), `${UNRECORDED}${basename(path)}`));
    return rec.usd;
  } catch {
    // Removed with the other stale holds: nothing more can be kept of it.
    return 0;
  }
}

/**
 * When the process of a hold found stale was last known alive: its hold's last write (placed, or set as the call now held for was
 * sent: the process wrote nothing after it, or the answer's start would name the call), never after `now`. Its call was sent at
 * that write or just after (`usage --reconcile` widens the time by a minute each side): the time it was found dead, maybe hours
 * later, let the key's spend of all those hours settle it.
 */
export function lastSignOfLife(path: string, rec: Partial<HoldRecord>, now: number): number {
  let written: number;
  try {
    written = statSync(path).mtimeMs;
  } catch {
    written = NaN;
  }
  const said = Date.parse(rec.since ?? rec.time ?? '');
  const last = Math.max(Number.isNaN(written) ? -Infinity : written, Number.isNaN(said) ? -Infinity : said);
  return Number.isFinite(last) ? Math.min(now, last) : now;
}

/**
 * The ledger line of a call held for that ended (or was killed) before its cost was known: its bound, unsettled. One whose answer
 * had not begun has no generation id: it is named `held-…`, with when it was sent (between `sent_after`, when it was held for
 * (a tool loop's round: that round's, not the loop's first), and `sent_before`, `now`: when it ended, or its process was last
 * known alive) and its key's hash, so that
 * `usage --reconcile` can settle it by what the service says that key spent then.
 */
export function unsettledLine(rec: Partial<HoldRecord> & { usd: number; profile: string }, now = Date.now()): UsageRecord & { cost: number; unsettled: string } {
  const named = typeof rec.id === 'string' && typeof rec.endpoint === 'string';
  return {
    time: rec.time!,
    profile: rec.profile,
    command: typeof rec.command === 'string' ? rec.command : 'unknown',
    endpoint: named ? rec.endpoint! : 'unknown',
    ...(named ? { id: rec.id } : { id: `${HELD}${randomHex(8)}`, sent_after: rec.since ?? rec.time!, sent_before: new Date(Math.max(now, Date.parse(rec.since ?? rec.time!) || 0)).toISOString(), ...(typeof rec.key_hash === 'string' ? { key_hash: rec.key_hash } : {}) }),
    ...(typeof rec.model === 'string' ? { model: rec.model } : {}),
    cost: boundCost(rec.usd),
    ...(typeof rec.api_root === 'string' ? { api_root: rec.api_root } : {}),
    unsettled: UNSETTLED,
  };
}

/** The start of the name of a call counted at its bound that had no generation id when it ended (unsettledLine()). */
export const HELD = 'held-';

/** The line that takes back a line counted at a call's bound (SpendGuard.abandon()'s) once the call ended: at that line's time, as reconcile's. */
export function withdrawnLine(line: UsageRecord & { id: string; cost: number }): UsageRecord & { reconciles: string; real_cost: number } {
  return { time: line.time, profile: line.profile, command: line.command, endpoint: line.endpoint, ...(line.model ? { model: line.model } : {}), reconciles: line.id, real_cost: 0, cost: -line.cost };
}

/** What a ledger line counted at its call's bound says (`usage --reconcile` puts the cost charged beside it where it has an id). */
export const UNSETTLED = 'the cost of this call was not known when it ended: counted at its bound';

/** A bound as a ledger cost: up to the service's ten decimals, never below it. */
export function boundCost(usd: number): number {
  return Math.ceil(usd * 1e10 - 1e-6) / 1e10;
}
