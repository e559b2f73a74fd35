/**
 * `router usage --reconcile`: the cost the service really charged, from `GET /v1/generation`, put
 * into the usage ledger for calls it recorded with their generation id. The ledger is only appended
 * to: each call checked gets one line that names it (`reconciles`), at the call's own time, whose
 * `cost` is the difference from what the answer reported; totals and budgets sum it as they read.
 * A run checks at most `limit` calls, oldest first, and a later run goes on where it stopped: a call the service did
 * not know yet is asked again only ASK_AGAIN_MS later, and one it will never know not at all.
 */
import type { RouterClient } from '../../client/index.js';
import { APIError } from '../../client/errors.js';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { appendUsage, ledgerPath, type UsageRecord } from './ledger.js';
import { withFileLockAsync } from '../../internal/with-file-lock.js';
import { makeDir } from '../../internal/make-dir.js';
import { eachLedgerRecord } from './ledger-read.js';
import { roundCost } from '../../internal/round-cost.js';
import { rootKey, sameRoot } from '../../internal/api-root.js';
import { HELD } from './hold-record.js';
import type { HeldReport, NamedCall } from './reconcile-held.js';

/** The endpoints whose answers are generations the service can describe. */
const GENERATED = new Set(['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/audio/speech', '/alpha/decisions']);
/** A generation still unknown this long after its call is taken as one the service will not describe (another key's, a lost one). */
const GIVE_UP_MS = 60 * 60 * 1000;
/**
 * A generation unknown to a service that knows one made this long after it will not be known there: the service
 * describes generations in the order it made them, a little late at most. Most often a call of an emulator whose
 * state was reset (router serve restarted with another --state on the same root).
 */
const KNOWN_LATER_MS = 2 * 60 * 1000;
/** A call the service did not know yet is asked about again this long after (reconcile-asked.ts keeps when). */
export const ASK_AGAIN_MS = 5 * 60 * 1000;

export interface Reconciled {
  id: string;
  time: string;
  model?: string | undefined;
  reported: number | null;
  charged: number;
}

export interface ReconcileReport {
  /** Calls asked about in this run. */
  checked: number;
  reconciled: Reconciled[];
  /** Unknown to the service past GIVE_UP_MS: marked, and not asked about again. */
  not_found: string[];
  /** Unknown to a service that knows calls made later (KNOWN_LATER_MS): marked, and not asked about again. */
  unknown_here: string[];
  /** Unknown to the service yet (too recent): asked about again after ASK_AGAIN_MS. */
  pending: string[];
  /** Unknown to the service when asked less than ASK_AGAIN_MS ago: not asked in this run. */
  waiting: string[];
  /** Calls of the ledger still to ask about after this run (at this API root), past the limit or a failure; pending and waiting apart. */
  left: number;
  /** Calls still to check that went to another API root (by root): that service is asked, not this one. */
  elsewhere: Record<string, number>;
  /** Why the run stopped early (a network failure, a refused key), if it did. */
  stopped?: string | undefined;
  reported_cost: number;
  charged_cost: number;
  /** Calls counted at their bound before their answer named them (reconcile-held.ts): settled by the key's spend, or why not. */
  held: HeldReport;
  /** Batches that ended naming no cost, held at their bound (reconcile-batch.ts): settled by the key's spend, or why not. */
  batches: HeldReport;
  /** Kept sends of creates never answered that nothing joined (reconcile-sent.ts; ids: the holds' names): settled by the key's spend, or why not. */
  sent: HeldReport;
}

type Checked = UsageRecord & { reconciles?: string; real_cost?: number | null };

/**
 * The ledger's calls of `profile` with a generation id and no reconciling line yet, oldest first; a call that names no API root (an older ledger's) is taken as this one's.
 * `held`: those counted at their bound before an answer named them (`held-…`), at this root.
 */
async function unreconciled(env: NodeJS.ProcessEnv, profile: string, apiRoot: string, signal: AbortSignal): Promise<{ todo: UsageRecord[]; elsewhere: Record<string, number>; held: UsageRecord[] }> {
  const open = new Map<string, UsageRecord>();
  const held = new Map<string, UsageRecord>();
  const done = new Set<string>();
  await eachLedgerRecord(env, (r: Checked) => {
    if (typeof r.reconciles === 'string') {
      if (r.profile !== profile) return;
      done.add(r.reconciles);
      open.delete(r.reconciles);
      held.delete(r.reconciles);
      return;
    }
    const generated = isGenerated(r);
    if (r.profile !== profile || typeof r.id !== 'string' || done.has(r.id)) return;
    if (generated) open.set(r.id, r);
    else if (r.id.startsWith(HELD) && r.unsettled !== undefined && (typeof r.api_root !== 'string' || sameRoot(r.api_root, apiRoot))) held.set(r.id, r);
  }, signal);
  const todo: UsageRecord[] = [];
  const elsewhere: Record<string, number> = {};
  for (const r of open.values()) {
    if (typeof r.api_root !== 'string' || sameRoot(r.api_root, apiRoot)) todo.push(r);
    else elsewhere[rootKey(r.api_root)] = (elsewhere[rootKey(r.api_root)] ?? 0) + 1;
  }
  return { todo, elsewhere, held: [...held.values()] };
}

const isGenerated = (r: UsageRecord) => typeof r.id === 'string' && r.id !== '' && !r.batch_id && GENERATED.has(r.endpoint);

/**
 * Every call of the ledger with a generation id and a key's hash, read as it is now: a settling by a key's spend takes them off
 * what the key spent, so it reads them after asking the spend (a call made during a long run is not taken for another's charge).
 */
async function namedCalls(env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<NamedCall[]> {
  const named: NamedCall[] = [];
  await eachLedgerRecord(env, (r: Checked) => {
    if (typeof r.reconciles !== 'string' && isGenerated(r) && typeof r.key_hash === 'string') named.push({ id: r.id!, time: r.time, key_hash: r.key_hash });
  }, signal);
  return named;
}

/** Checks up to `limit` calls; a failure that stops the run early is `failure` (after the report of what was done). */
/** How long a run waits for another run's end (it asks at most --limit calls). */
const OTHER_RUN_WAIT_MS = 120_000;

/**
 * One run at a time for a ledger (`reconcile.lock` beside it): two at once read the same calls unreconciled and
 * each wrote a line for them, a call's cost taken down twice (the second line refused by the budgets as damaged).
 */
export async function reconcile(o: { env: NodeJS.ProcessEnv; profile: string; client: RouterClient; manager?: RouterClient | undefined; limit: number; signal: AbortSignal; now?: number | undefined; keyHash?: string | undefined }): Promise<{ report: ReconcileReport; failure?: unknown }> {
  const dir = dirname(ledgerPath(o.env));
  makeDir(dir);
  return withFileLockAsync(join(dir, 'reconcile'), () => reconcileAlone(o), OTHER_RUN_WAIT_MS);
}

/**
 * The holds of processes gone (kill -9) put in the ledger first, as the next budgeted call would (held-by-others.ts): their calls
 * are reconciled in this run, not left at nothing until another call. Where the holds cannot be locked, they wait for that call.
 */
async function ledgerDeadHolds(env: NodeJS.ProcessEnv, signal: AbortSignal, now: number): Promise<void> {
  const { heldByOthers, holdsDir, withBudgetLock } = await import('./budget-hold.js');
  if (!existsSync(holdsDir(env))) return;
  await withBudgetLock(env, signal, async () => void heldByOthers(env, '', undefined, now)).catch(() => {});
}

/** The steps of a run, loaded by the first run: a program that imports the kit and never reconciles does not load them. */
async function reconcileSteps() {
  const [asked, held, batch, sent, joint, bound] = await Promise.all([import('./reconcile-asked.js'), import('./reconcile-held.js'), import('./reconcile-batch.js'), import('./reconcile-sent.js'), import('./reconcile-joint.js'), import('./lookup-bound.js')]);
  return { ...asked, ...held, ...batch, ...sent, ...joint, ...bound };
}

async function reconcileAlone(o: Parameters<typeof reconcile>[0]): Promise<{ report: ReconcileReport; failure?: unknown }> {
  const now = o.now ?? Date.now();
  await ledgerDeadHolds(o.env, o.signal, now);
  const named = () => namedCalls(o.env, o.signal);
  const { todo, elsewhere, held } = await unreconciled(o.env, o.profile, o.client.core.apiRoot, o.signal);
  const report: ReconcileReport = { checked: 0, reconciled: [], not_found: [], unknown_here: [], pending: [], waiting: [], left: 0, elsewhere, reported_cost: 0, charged_cost: 0, held: { settled: [], waiting: [], unsettled: [] }, batches: { settled: [], waiting: [], unsettled: [] }, sent: { settled: [], waiting: [], unsettled: [] } };
  const write = (r: UsageRecord, real: number | null) => {
    const reported = typeof r.cost === 'number' && Number.isFinite(r.cost) ? r.cost : 0;
    const line: Checked = { time: r.time, profile: r.profile, command: r.command, endpoint: r.endpoint, ...(r.model ? { model: r.model } : {}), reconciles: r.id!, real_cost: real, cost: real === null ? 0 : roundCost(real - reported) };
    const problem = appendUsage(o.env, line);
    if (problem) throw Object.assign(new Error(problem), { ledger: true });
  };
  const key = `${o.profile} ${rootKey(o.client.core.apiRoot)}`;
  const { readAsked, saveAsked, asker, settleHeld, endedBatchHolds, lostSendHolds, settleJointly, lookupWithin } = await reconcileSteps();
  const asked = readAsked(o.env, key);
  const stillUnknown = new Map<string, number>();
  let failure: unknown;
  const unknownYet: UsageRecord[] = [];
  const askedBefore: UsageRecord[] = [];
  for (const r of todo) {
    const before = asked.unknown.get(r.id!);
    // Not known a moment ago: asked again once it can have changed, so that a run walks on to calls not asked yet.
    if (before !== undefined && now - before < ASK_AGAIN_MS) {
      askedBefore.push(r);
      continue;
    }
    if (report.checked >= o.limit || failure) {
      if (before !== undefined) stillUnknown.set(r.id!, before);
      report.left++;
      continue;
    }
    report.checked++;
    try {
      const g = await lookupWithin(o.client, o.signal, 'GET /generation', (signal) => o.client.generations.get(r.id!, { signal }));
      write(r, g.total_cost);
      const reported = typeof r.cost === 'number' && Number.isFinite(r.cost) ? r.cost : null;
      report.reconciled.push({ id: r.id!, time: r.time, ...(r.model ? { model: r.model } : {}), reported, charged: g.total_cost });
      report.reported_cost += reported ?? 0;
      report.charged_cost += g.total_cost;
      asked.newestKnown = Math.max(asked.newestKnown, Date.parse(r.time));
    } catch (err) {
      if (err instanceof APIError && err.status === 404) {
        if (now - Date.parse(r.time) > GIVE_UP_MS) {
          write(r, null);
          report.not_found.push(r.id!);
        } else unknownYet.push(r);
        continue;
      }
      if (o.signal.aborted) throw err;
      // Anything else (the network, a refused key, a limit): what is done is kept; the rest waits for the next run.
      report.stopped = (err as Error).message;
      failure = err;
      if (before !== undefined) stillUnknown.set(r.id!, before);
      report.left++;
    }
  }
  const madeBeforeKnown = (r: UsageRecord) => Date.parse(r.time) < asked.newestKnown - KNOWN_LATER_MS;
  for (const r of unknownYet) {
    if (madeBeforeKnown(r)) {
      write(r, null);
      report.unknown_here.push(r.id!);
    } else {
      report.pending.push(r.id!);
      stillUnknown.set(r.id!, now);
    }
  }
  // Unknown when asked well after it was made, and made before a call the service knows: that answer is final.
  for (const r of askedBefore) {
    const at = asked.unknown.get(r.id!)!;
    if (at - Date.parse(r.time) >= KNOWN_LATER_MS && madeBeforeKnown(r)) {
      write(r, null);
      report.unknown_here.push(r.id!);
    } else {
      report.waiting.push(r.id!);
      stillUnknown.set(r.id!, at);
    }
  }
  if (!failure && held.length) {
    try {
      const h = await settleHeld({ held, named, client: o.client, manager: o.manager, now, limit: o.limit - report.checked, signal: o.signal, write: (r, charged) => write(r, charged) });
      report.held = h.report;
      report.checked += h.checked;
    } catch (err) {
      if (o.signal.aborted || (err as { ledger?: boolean }).ledger) throw err;
      report.stopped = (err as Error).message;
      failure = err;
    }
  }
  if (!failure) {
    try {
      // Both kinds of hold settled by a key's spend, asked about under one limit and settled together (reconcile-joint.ts).
      const ask = asker({ manager: o.manager, limit: o.limit - report.checked, signal: o.signal }, 'batch');
      const at = { env: o.env, profile: o.profile, apiRoot: o.client.core.apiRoot, client: o.client, keyHash: o.keyHash, now, signal: o.signal, ask };
      const ready = [...(await endedBatchHolds(at, report.batches)), ...(await lostSendHolds(at, report.sent))];
      report.checked += ask.checked();
      if (ready.length) await settleJointly({ env: o.env, apiRoot: o.client.core.apiRoot, named, client: o.client, manager: o.manager!, signal: o.signal }, ready);
    } catch (err) {
      if (o.signal.aborted || (err as { ledger?: boolean }).ledger) throw err;
      report.stopped = (err as Error).message;
      failure = err;
    }
  }
  if (report.checked || stillUnknown.size !== asked.unknown.size) saveAsked(o.env, key, { newestKnown: asked.newestKnown, unknown: stillUnknown });
  report.reported_cost = roundCost(report.reported_cost);
  report.charged_cost = roundCost(report.charged_cost);
  return { report, failure };
}
