/**
 * `usage --reconcile` for a kept `batch-sent-…` hold (a budgeted `batch create` sent and never answered: sent-create.ts) whose create
 * record is gone or written again by a later send (`--new`): nothing can join it to a batch any more (sent-link.ts), so it stood at its
 * bound for its 48 hours. A batch it made ran within its window (24 hours from its making, a little after the send) and was charged by
 * an hour after: once that has passed, what it was charged is at most what its key spent from the send to the window's end (a
 * management key's analytics), less what the calls the ledger names cost then: settled at that, never above the bound, its hold let go.
 * Over, never under: other batches of that key in that window are not subtracted.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { rootKey, sameRoot } from '../../internal/api-root.js';
import { roundCost } from '../../internal/round-cost.js';
import { holdsDir } from './budget-lock.js';
import { appendUsage } from './ledger.js';
import { CLOCK_MARGIN_MS, SETTLE_HELD_AFTER_MS, asker, spendBeyondNamed, type GenerationCosts, type HeldReport } from './reconcile-held.js';
import type { SettleHoldsOptions } from './reconcile-batch.js';
import { SENT_CREATE, unheardSend } from './sent-create.js';
import { SKEW_MS } from './sent-link.js';

/** A batch runs at most this long from its making (its `completion_window`, 24h): then it expires, charged for what ran. */
export const BATCH_WINDOW_MS = 24 * 3_600_000;

interface SentHold {
  profile?: unknown;
  usd?: unknown;
  key_hash?: unknown;
  api_root?: unknown;
  model?: unknown;
  sent?: { sent_at?: unknown };
}

/** Settles what it can of the kept sends of `profile` at `apiRoot` whose record is gone; the report (ids: the holds' names) and how many it asked about. */
export async function settleLostSends(o: SettleHoldsOptions): Promise<{ report: HeldReport; checked: number }> {
  const report: HeldReport = { settled: [], waiting: [], unsettled: [] };
  const dir = holdsDir(o.env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(SENT_CREATE) && n.endsWith('.json'));
  } catch {
    return { report, checked: 0 };
  }
  const ask = asker(o, 'batch');
  const costs: GenerationCosts = new Map();
  for (const name of names) {
    const path = join(dir, name);
    let rec: SentHold;
    try {
      rec = JSON.parse(readFileSync(path, 'utf8')) as SentHold;
    } catch {
      continue;
    }
    if (rec.profile !== o.profile || typeof rec.usd !== 'number' || !(rec.usd > 0)) continue;
    if (typeof rec.api_root === 'string' && !sameRoot(rec.api_root, o.apiRoot)) continue;
    // Its record still says unanswered: a rerun, or a command that sees its batch, may still join it; left to them.
    if (unheardSend(rec.sent) !== undefined) continue;
    const id = name.slice(0, -'.json'.length);
    const start = Date.parse(typeof rec.sent?.sent_at === 'string' ? rec.sent.sent_at : '');
    if (typeof rec.key_hash !== 'string' || Number.isNaN(start)) {
      report.unsettled.push({ id, why: 'its hold names no key or no time it was sent (made by an older router)' });
      continue;
    }
    // The window of a batch it may have made: from the send (the two clocks apart) to 24 hours after that batch's making.
    const w = { start: start - SKEW_MS - CLOCK_MARGIN_MS, end: start + BATCH_WINDOW_MS + SKEW_MS + CLOCK_MARGIN_MS };
    // Until then, and the hour the service takes to count it after, money may still be charged.
    if (o.now - w.end < SETTLE_HELD_AFTER_MS) {
      report.waiting.push(id);
      continue;
    }
    const not = await ask.whyNot(rec.key_hash);
    if (not === 'stop') break;
    if (not) {
      report.unsettled.push({ id, why: not });
      continue;
    }
    const { left } = await spendBeyondNamed({ ...o, manager: o.manager!, costs }, rec.key_hash, w);
    // The service has not counted all the calls named: asked again by a later run.
    if (left < -1e-9) {
      report.waiting.push(id);
      continue;
    }
    const charged = Math.min(rec.usd, roundCost(Math.max(0, left)));
    // At the window's end: the latest a batch it made could have been charged.
    const time = new Date(start + BATCH_WINDOW_MS).toISOString();
    const model = typeof rec.model === 'string' ? { model: rec.model } : {};
    const problem = appendUsage(o.env, { time, profile: o.profile, command: 'usage --reconcile', endpoint: '/v1/batches', ...model, cost: charged, api_root: rootKey(o.apiRoot), key_hash: rec.key_hash, sent_after: new Date(start).toISOString(), sent_before: time });
    if (problem) throw Object.assign(new Error(problem), { ledger: true });
    rmSync(path, { force: true });
    report.settled.push({ id, time, ...model, bound: rec.usd, charged });
  }
  return { report, checked: ask.checked() };
}
