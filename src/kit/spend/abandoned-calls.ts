/**
 * SpendGuard.abandon(): the calls of a guard checked and not yet ended are counted at their bound (in `spent` and,
 * under a budget, an `unsettled` ledger line each, named so that it can be taken back). One of them may still be
 * running: when it ends after all it is counted once, at what it cost, and the line from abandon() is taken back
 * (a line naming it, as reconcile's do) once the call's own is written; one not sent or refused is taken back whole.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { boundCost, UNRECORDED, UNSETTLED, withdrawnLine } from './hold-record.js';
import { appendUsage, type UsageRecord } from './ledger.js';
import { ledgerLinesWith } from './ledger-find.js';
import type { BudgetHold } from './budget-hold.js';
import type { SpendGuardOptions } from './spend-guard-options.js';
import type { UnderwayCall } from './underway.js';

/** What of a SpendGuard its abandoned calls touch. */
interface SpendGuard {
  spent: number;
  readonly env: NodeJS.ProcessEnv;
  readonly opts: Pick<SpendGuardOptions, 'recorded' | 'budgets'>;
  readonly hold?: BudgetHold;
}

/** Whether the guard's calls go to the usage ledger. */
export function recordingOf(guard: SpendGuard): boolean {
  return guard.opts.recorded ?? !!guard.opts.budgets;
}

/** Appends a line of the guard's profile (now, unless the entry says when); why it could not be, if it could not. */
export function appendOf(guard: SpendGuard, entry: Omit<UsageRecord, 'time' | 'profile'> & { time?: string }): string | undefined {
  return appendUsage(guard.env, { time: new Date().toISOString(), profile: guard.opts.budgets?.profile ?? 'default', ...entry });
}

/** Counts calls abandoned at their bound; what the ledger cannot take is held past the process instead (for a day). */
export function abandonCalls(guard: SpendGuard, lost: UnderwayCall[]): void {
  const { hold } = guard;
  let unwritten = 0;
  const unlined: UnderwayCall[] = [];
  for (const c of lost) {
    guard.spent += c.bound;
    if (!hold?.live || c.bound <= 0) continue;
    const line = hold.abandonedLine(c.bound, c.since);
    if (appendOf(guard, line)) {
      unwritten += c.bound;
      unlined.push(c);
    } else c.abandoned = { line };
  }
  if (!hold?.live) return;
  hold.set(unwritten, true);
  // The hold's file is renamed as it is kept: a late ending lessens that file by its call's bound.
  const kept = join(dirname(hold.path), `${UNRECORDED}${basename(hold.path)}`);
  if (unwritten && hold.unrecorded(unwritten)) for (const c of unlined) c.abandoned = { kept };
}

/**
 * A call whose bound a kept hold (`unrecorded-`) holds for the day ended after all, and the ledger has its line (or it cost nothing):
 * the hold holds its bound no longer (at 0 it goes). Where the hold cannot be written (a disk full again) it stays: more held, never less.
 */
function unkeep(path: string, usd: number): void {
  try {
    const rec = JSON.parse(readFileSync(path, 'utf8')) as { usd: number };
    rec.usd = boundCost(Math.max(0, rec.usd - usd));
    if (rec.usd <= 0) return rmSync(path, { force: true });
    writeFileSync(`${path}.part`, JSON.stringify(rec), { mode: 0o600 });
    renameSync(`${path}.part`, path);
  } catch {
    rmSync(`${path}.part`, { force: true });
  }
}

/** An abandoned call answered after all: its line (its cost, else still its bound), then abandon()'s line taken back. */
export function recordLate(guard: SpendGuard, entry: Omit<UsageRecord, 'time' | 'profile'>, ended: UnderwayCall): string | undefined {
  const known = typeof entry.cost === 'number' && Number.isFinite(entry.cost);
  const counted = ended.abandoned?.line;
  if (!known && counted) entry = { ...entry, cost: counted.cost, unsettled: counted.unsettled };
  // Held for the day in its stead: its line now counts it at its bound until reconciled, and the hold lets that go.
  else if (!known && ended.abandoned?.kept) entry = { ...entry, cost: boundCost(ended.bound), unsettled: UNSETTLED };
  if (known) guard.spent += entry.cost! - ended.bound;
  const problem = recordingOf(guard) ? appendOf(guard, entry) : undefined;
  if (!problem) withdraw(guard, ended, true, false);
  return problem;
}

/**
 * What abandon()'s `line` counts in the ledger now: its bound, or, once `usage --reconcile` settled it (an hour after, by the key's
 * spend, the call still running), what that settled it at. Taking back the bound then took back a line already taken down: refused
 * as damaged, and the call counted twice (its settled line and its own).
 */
function countedNow(env: NodeJS.ProcessEnv, line: { id: string; cost: number }): number {
  const settled = ledgerLinesWith(env, `"reconciles":${JSON.stringify(line.id)}`).find((r) => r.reconciles === line.id && typeof r.real_cost === 'number');
  return settled ? (settled.real_cost as number) : line.cost;
}

/** Takes back (where `taken`) what abandon() counted of a call: in `spent` (unless `unspend` is false) and its ledger line. */
export function withdraw(guard: SpendGuard, ended: UnderwayCall, taken = true, unspend = true): void {
  if (!taken) return;
  if (unspend) guard.spent -= ended.bound;
  const line = ended.abandoned?.line;
  if (line) {
    const counts = countedNow(guard.env, line);
    if (counts > 0) appendOf(guard, withdrawnLine({ ...line, cost: counts }));
  }
  else if (ended.abandoned?.kept) unkeep(ended.abandoned.kept, ended.bound);
}
