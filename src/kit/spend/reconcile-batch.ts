/**
 * `usage --reconcile` for batches that ended naming no cost though some requests completed (the deployed service's `usage`
 * and `results` are null unless completed; no generation id is had to ask about). Their hold (`batch-ID.json`) stays at the
 * bound; once the batch was seen ended (`ended_at`, markBatchEnded()) an hour ago, the service has counted all it charged for
 * it, and what it charged is at most what the batch's key spent from the batch's send to then (a management key's
 * analytics), less what the ledger puts there already: settled at that (jointly with the key's other holds settled so whose
 * windows overlap: reconcile-joint.ts), never above the bound, its hold let go. The key's spend must count at least the
 * batches' completed requests beside the calls named, else the run waits. A hold that names no key or send time (an older
 * router's, or a rerun's before it named them) is taken as sent with the profile's key since the batch's `created_at`, where
 * the service shows the batch to that key; else said why it waits, and until when.
 */
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RouterClient } from '../../client/index.js';
import { rootKey, sameRoot } from '../../internal/api-root.js';
import { holdsDir } from './budget-lock.js';
import { BATCH_HOLD_MAX_AGE_MS } from './hold-record.js';
import { appendUsage, batchHoldPath } from './ledger.js';
import { CLOCK_MARGIN_MS, SETTLE_HELD_AFTER_MS, type Asker, type HeldReport, type Window } from './reconcile-held.js';
import type { KeySpendHold } from './reconcile-joint.js';
import { batchRecorded, SENT_CREATE } from './sent-create.js';
import { lookupWithin } from './lookup-bound.js';

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
  time?: unknown;
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

/**
 * What a batch's cost line says of where its charges lie, from its hold (the key it was sent with, and since when) to now: a settling by
 * that key's spend over that time takes it off (reconcile-joint.ts). Nothing where its hold names neither.
 */
export function batchSpan(env: NodeJS.ProcessEnv, batchId: string): { key_hash?: string; sent_after?: string; sent_before?: string } {
  try {
    const rec = JSON.parse(readFileSync(batchHoldPath(env, batchId), 'utf8')) as EndedHold;
    if (typeof rec.key_hash !== 'string' || typeof rec.sent_after !== 'string' || Number.isNaN(Date.parse(rec.sent_after))) return {};
    return { key_hash: rec.key_hash, sent_after: rec.sent_after, sent_before: new Date().toISOString() };
  } catch {
    return {};
  }
}

/** What usage --reconcile gives each settler of holds by key spend (ended batches here, lost sends in reconcile-sent.ts). */
export interface SettleHoldsOptions {
  env: NodeJS.ProcessEnv;
  profile: string;
  apiRoot: string;
  client: RouterClient;
  /** SHA-256 of the profile's key now: a hold that names no key is taken as sent with it where the service knows its batch. */
  keyHash?: string | undefined;
  now: number;
  signal: AbortSignal;
  ask: Asker;
}

/** Until when a batch's hold at `path` (made at its `time`) stays held if nothing settles it. */
export function heldUntil(rec: { time?: unknown }): string {
  const made = Date.parse(typeof rec.time === 'string' ? rec.time : '');
  return Number.isNaN(made) ? 'for 48 hours after it was made' : `until ${new Date(made + BATCH_HOLD_MAX_AGE_MS).toISOString()}`;
}

/** The ended batches' holds of `profile` at `apiRoot` ready to be settled by their key's spend (reconcile-joint.ts); the others said in `report`. */
export async function endedBatchHolds(o: SettleHoldsOptions, report: HeldReport): Promise<KeySpendHold[]> {
  let names: string[];
  try {
    names = readdirSync(holdsDir(o.env)).filter((n) => n.startsWith('batch-') && !n.startsWith(SENT_CREATE) && n.endsWith('.json'));
  } catch {
    return [];
  }
  const ready: KeySpendHold[] = [];
  for (const name of names) {
    let rec: EndedHold;
    try {
      rec = JSON.parse(readFileSync(join(holdsDir(o.env), name), 'utf8')) as EndedHold;
    } catch {
      continue;
    }
    if (typeof rec.batch_id !== 'string' || typeof rec.ended_at !== 'string' || typeof rec.usd !== 'number') continue;
    if (typeof rec.api_root === 'string' && !sameRoot(rec.api_root, o.apiRoot)) continue;
    // Another profile's hold of a key it names is settled with this profile's of that key (one key's spend, split once);
    // what becomes of it otherwise is said by that profile's run.
    const own = rec.profile === o.profile;
    if (!own && (typeof rec.profile !== 'string' || typeof rec.key_hash !== 'string' || typeof rec.sent_after !== 'string')) continue;
    const profile = rec.profile as string;
    const id = rec.batch_id;
    // Its cost is in the ledger already (a run killed -9 after its settling's line, before the hold went): let go, not settled twice.
    if (batchRecorded(o.env, id)) {
      rmSync(join(holdsDir(o.env), name), { force: true });
      continue;
    }
    const end = Date.parse(rec.ended_at);
    if (o.now - end < SETTLE_HELD_AFTER_MS) {
      if (own) report.waiting.push(id);
      continue;
    }
    // Made by an older router, or found by a rerun: the service says when the batch was made, and the profile's key is the one.
    const by = typeof rec.key_hash === 'string' && typeof rec.sent_after === 'string' ? { hash: rec.key_hash, start: Date.parse(rec.sent_after) } : await askedOf(o, rec);
    if (typeof by === 'string') {
      report.unsettled.push({ id, why: by });
      continue;
    }
    if (!(by.start <= end)) {
      if (own) report.unsettled.push({ id, why: `its hold names no time it was sent before it ended: held ${heldUntil(rec)}` });
      continue;
    }
    const not = await o.ask.whyNot(by.hash);
    if (not === 'stop') break;
    if (not) {
      if (own) report.unsettled.push({ id, why: `${not}: held ${heldUntil(rec)}` });
      continue;
    }
    const model = typeof rec.model === 'string' ? rec.model : undefined;
    ready.push({
      id,
      key_hash: by.hash,
      window: { start: by.start - CLOCK_MARGIN_MS, end: end + CLOCK_MARGIN_MS },
      bound: rec.usd,
      completed: typeof rec.completed === 'number' ? rec.completed : 1,
      report,
      settle: (charged, u) => {
        const problem = appendUsage(o.env, { time: rec.ended_at as string, profile, command: 'usage --reconcile', endpoint: '/v1/batches', ...(model ? { model } : {}), batch_id: id, cost: charged, api_root: rootKey(o.apiRoot), key_hash: by.hash, ...spanOf(u) });
        if (problem) throw Object.assign(new Error(problem), { ledger: true });
        return { time: rec.ended_at as string, model };
      },
    });
  }
  return ready;
}

/** Where a settling line's charge lies, as the ledger keeps it (reconcile-joint.ts reads it back). */
export const spanOf = (u: Window) => ({ sent_after: new Date(u.start + CLOCK_MARGIN_MS).toISOString(), sent_before: new Date(u.end - CLOCK_MARGIN_MS).toISOString() });

/** A hold naming no key or no send time: its key and start as the service tells (the batch, at the profile's key), or why not. */
async function askedOf(o: SettleHoldsOptions, rec: EndedHold): Promise<{ hash: string; start: number } | string> {
  const hash = typeof rec.key_hash === 'string' ? rec.key_hash : o.keyHash;
  if (!hash) return `its hold names no key (made by an older router, or found by a rerun) and the profile's key is not known: held ${heldUntil(rec)}`;
  try {
    const b = await lookupWithin(o.client, o.signal, 'GET /batches', (signal) => o.client.batches.get(rec.batch_id as string, { signal }));
    return { hash, start: b.created_at * 1000 };
  } catch (err) {
    if (o.signal.aborted) throw err;
    return `its hold names no key or no time it was sent (made by an older router, or found by a rerun), and the service does not show its batch to the profile's key (${(err as Error).message}): held ${heldUntil(rec)}`;
  }
}
