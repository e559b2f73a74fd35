/**
 * `usage --reconcile` for batches that ended naming no cost though some requests completed (the deployed service's `usage`
 * and `results` are null unless completed; no generation id is had to ask about). Their hold (`batch-ID.json`) stays at the
 * bound; once the batch was seen ended (`ended_at`, markBatchEnded()) an hour ago, the service has counted all it charged for
 * it, and what it charged is at most what the batch's key spent from the batch's send to then (a management key's
 * analytics), less what the calls the ledger names cost then: settled at that, never above the bound, its hold let go. The
 * key's spend must count at least the batch's completed requests beside those named, else the run waits.
 */
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RouterClient } from '../../client/index.js';
import { rootKey, sameRoot } from '../../internal/api-root.js';
import { roundCost } from '../../internal/round-cost.js';
import { holdsDir } from './budget-lock.js';
import { appendUsage, batchHoldPath } from './ledger.js';
import { CLOCK_MARGIN_MS, SETTLE_HELD_AFTER_MS, asker, spendBeyondNamed, type GenerationCosts, type HeldReport, type NamedCall } from './reconcile-held.js';
import { SENT_CREATE } from './sent-create.js';

interface EndedHold {
  profile?: unknown;
  usd?: unknown;
  batch_id?: unknown;
  key_hash?: unknown;
  api_root?: unknown;
  sent_after?: unknown;
  ended_at?: unknown;
  completed?: unknown;
  model?: unknown;
}

/** A batch seen ended with `completed` requests and no cost named: its hold says when, so that usage --reconcile can settle it. */
export function markBatchEnded(env: NodeJS.ProcessEnv, batchId: string, completed: number, model: string | undefined): void {
  const path = batchHoldPath(env, batchId);
  try {
    const rec = JSON.parse(readFileSync(path, 'utf8')) as EndedHold;
    if (typeof rec.ended_at === 'string') return;
    const part = `${path}.part`;
    writeFileSync(part, JSON.stringify({ ...rec, ended_at: new Date().toISOString(), completed, ...(model ? { model } : {}) }), { mode: 0o600 });
    renameSync(part, path);
  } catch {
    // No hold (settled, or none placed), or one that cannot be written: it stays at its bound for its 48 hours.
  }
}

/** What usage --reconcile gives each settler of holds by key spend (ended batches here, lost sends in reconcile-sent.ts). */
export interface SettleHoldsOptions {
  env: NodeJS.ProcessEnv;
  profile: string;
  apiRoot: string;
  named: NamedCall[];
  client: RouterClient;
  manager?: RouterClient | undefined;
  now: number;
  limit: number;
  signal: AbortSignal;
}

/** Settles what it can of the ended batches' holds of `profile` at `apiRoot`; returns the report and how many it asked about. */
export async function settleEndedBatches(o: SettleHoldsOptions): Promise<{ report: HeldReport; checked: number }> {
  const report: HeldReport = { settled: [], waiting: [], unsettled: [] };
  let names: string[];
  try {
    names = readdirSync(holdsDir(o.env)).filter((n) => n.startsWith('batch-') && !n.startsWith(SENT_CREATE) && n.endsWith('.json'));
  } catch {
    return { report, checked: 0 };
  }
  const ask = asker(o, 'batch');
  const costs: GenerationCosts = new Map();
  for (const name of names) {
    let rec: EndedHold;
    try {
      rec = JSON.parse(readFileSync(join(holdsDir(o.env), name), 'utf8')) as EndedHold;
    } catch {
      continue;
    }
    if (rec.profile !== o.profile || typeof rec.batch_id !== 'string' || typeof rec.ended_at !== 'string' || typeof rec.usd !== 'number') continue;
    if (typeof rec.api_root === 'string' && !sameRoot(rec.api_root, o.apiRoot)) continue;
    const id = rec.batch_id;
    const start = Date.parse(typeof rec.sent_after === 'string' ? rec.sent_after : '');
    const end = Date.parse(rec.ended_at);
    if (typeof rec.key_hash !== 'string' || !(start <= end)) {
      report.unsettled.push({ id, why: 'its hold names no key or no time it was sent (made by an older router, or found by a rerun)' });
      continue;
    }
    if (o.now - end < SETTLE_HELD_AFTER_MS) {
      report.waiting.push(id);
      continue;
    }
    const not = await ask.whyNot(rec.key_hash);
    if (not === 'stop') break;
    if (not) {
      report.unsettled.push({ id, why: not });
      continue;
    }
    const w = { start: start - CLOCK_MARGIN_MS, end: end + CLOCK_MARGIN_MS };
    const { requests, named, left } = await spendBeyondNamed({ ...o, manager: o.manager!, costs }, rec.key_hash, w);
    const completed = typeof rec.completed === 'number' ? rec.completed : 1;
    // The service has not counted the batch's requests yet (or not all the calls named): asked again by a later run.
    if (requests < named + completed || left < -1e-9) {
      report.waiting.push(id);
      continue;
    }
    const charged = Math.min(rec.usd, roundCost(Math.max(0, left)));
    const problem = appendUsage(o.env, { time: rec.ended_at, profile: o.profile, command: 'usage --reconcile', endpoint: '/v1/batches', ...(typeof rec.model === 'string' ? { model: rec.model } : {}), batch_id: id, cost: charged, api_root: rootKey(o.apiRoot), key_hash: rec.key_hash });
    if (problem) throw Object.assign(new Error(problem), { ledger: true });
    report.settled.push({ id, time: rec.ended_at, ...(typeof rec.model === 'string' ? { model: rec.model } : {}), bound: rec.usd, charged });
  }
  return { report, checked: ask.checked() };
}
