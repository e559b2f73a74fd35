/**
 * The hold of a `batch create` whose request was sent and whose answer was never heard (killed, Ctrl-C, the answer lost): its
 * batch may exist and spend, unseen by the ledger, so its bound stays held as a batch's is (48 hours, `batch-sent-…`), or in the
 * batch's own hold where the create's record names its batch. What says sent is the create's own record (`creates/KEY.json`,
 * src/batch/pending-create.ts): written before the request goes, removed once the id is out or nothing was made. Holds of
 * batches not yet made that were never sent (`batch run`'s) are let go as before: their batches are found again by their job.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readKeptRecord, sayKeptProblem, UNREADABLE } from '../../internal/kept-state.js';
import { basename, dirname, join } from 'node:path';
import { isRecord } from '../../internal/shape.js';
import { appendUsage, batchHoldPath } from './ledger.js';
import { ledgerLinesWith } from './ledger-find.js';

/** The name's start of a sent create's hold kept past its process. */
export const SENT_CREATE = 'batch-sent-';

/** A create's record, as its hold names it: the record's path and its `sent_at` (a record written again by a later send is another). */
export interface SentCreate {
  record: string;
  sent_at: string;
}

/** What is done with a send whose create's record is there but damaged or unreadable. */
const DAMAGED_THEN = 'its create is taken as sent and unanswered, its budget hold kept (its batch may exist)';

/**
 * What the create's record says while it still says this send's answer was never heard: its batch's id where known; else undefined.
 * A record that is gone says the answer was heard (or nothing made). One there that is damaged or cannot be read (kept-state.ts:
 * said once, never thrown) says nothing of it, so it is taken as unheard: read as heard, its hold went and the budget under-counted.
 */
export function unheardSend(sent: unknown): { batch_id?: string } | undefined {
  if (!isRecord(sent) || typeof sent.record !== 'string' || typeof sent.sent_at !== 'string') return undefined;
  const text = readKeptRecord(sent.record, DAMAGED_THEN);
  if (text === undefined) return undefined;
  let rec: unknown;
  try {
    rec = text === UNREADABLE ? undefined : JSON.parse(text);
  } catch {
    /* damaged, as below */
  }
  if (!isRecord(rec) || typeof rec.sent_at !== 'string') {
    if (text !== UNREADABLE) sayKeptProblem(sent.record, `is damaged (not a create record); ${DAMAGED_THEN}`);
    return {};
  }
  if (rec.sent_at !== sent.sent_at) return undefined;
  return typeof rec.batch_id === 'string' ? { batch_id: rec.batch_id } : {};
}

/**
 * What a create's hold keeps of its send: unheard (unheardSend()), and, where its batch is named, that batch's cost not yet in the ledger
 * (`router batch get ID` after the kill records it, whole, as the batch ended: its bound would be held 48 hours beside it). Else undefined.
 */
export function keptSend(env: NodeJS.ProcessEnv, rec: { usd?: unknown; sent?: unknown }): { batch_id?: string } | undefined {
  const said = typeof rec.usd === 'number' && rec.usd > 0 ? unheardSend(rec.sent) : undefined;
  return said?.batch_id && batchRecorded(env, said.batch_id) ? undefined : said;
}

/** Whether the ledger has batch `id`'s cost (a line is written for a batch only once it ended: its whole cost). */
export function batchRecorded(env: NodeJS.ProcessEnv, id: string): boolean {
  return ledgerLinesWith(env, `"batch_id":${JSON.stringify(id)}`).some((r) => r.batch_id === id && typeof r.cost === 'number' && Number.isFinite(r.cost));
}

/**
 * The hold at `path` of a create that ended (or was killed) sent and unanswered: renamed to its batch's hold (where the record names the
 * batch and it is not held already) or to `batch-sent-…`, so that it stays counted. Whether it was kept.
 */
export function keepUnheard(env: NodeJS.ProcessEnv, path: string, rec: { usd?: unknown; sent?: unknown }): boolean {
  const said = keptSend(env, rec);
  if (!said) return false;
  const to = said.batch_id ? batchHoldPath(env, said.batch_id) : join(dirname(path), `${SENT_CREATE}${basename(path)}`);
  if (existsSync(to)) return false;
  try {
    renameSync(path, to);
    return true;
  } catch {
    return false;
  }
}

/**
 * A rerun of the create learnt what `sent` made: `batchId`, whose hold the kept one becomes (unless that batch is held already), or
 * nothing (undefined: the kept hold goes). Call it holding the budgets' lock, after heldByOthers() has kept the holds of dead creates.
 */
export function settleUnheard(dir: string, env: NodeJS.ProcessEnv, sent: SentCreate, batchId: string | undefined): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(SENT_CREATE));
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const held = (JSON.parse(readFileSync(path, 'utf8')) as { sent?: Partial<SentCreate> }).sent;
      if (held?.record !== sent.record || held.sent_at !== sent.sent_at || !unsettleSend(env, path)) continue;
      if (batchId && !existsSync(batchHoldPath(env, batchId))) renameSync(path, batchHoldPath(env, batchId));
      else rmSync(path, { force: true });
    } catch {
      // Damaged, or taken by another rerun meanwhile.
    }
  }
}

/** What a kept send's hold says once `usage --reconcile` settled it by its key's spend while its record could still join it (reconcile-sent.ts). */
export interface SettledSend {
  /** The settling line's id and time in the ledger, and what it charged. */
  line: { id: string; time: string; cost: number };
  /** The bound it held before (held again once joined), and when it was kept (its batch was made before then). */
  usd: number;
  kept_at: number;
}

/**
 * Whether a kept send's hold is one settled by spend whose record still says it unanswered: kept, whatever its age, as long as
 * that record lasts (30 days: src/batch/pending-create.ts), since a batch get or a rerun may join its batch until then and take
 * the settling back. Let go at 48 hours, a batch joined later was counted beside its settling: twice.
 */
export function joinableSettled(rec: { settled_send?: unknown; sent?: unknown }): boolean {
  return isRecord(rec.settled_send) && unheardSend(rec.sent) !== undefined;
}

/**
 * A kept send settled by its key's spend is joined after all (its batch seen, or its rerun learnt what it made): the settling is taken
 * back in the ledger (a line that reconciles it to 0), and its hold holds its bound again, so that the batch's own cost counts it, once.
 * Where the ledger cannot take that line, the hold stays as it is (its settling counted). Whether the hold at `path` may be joined.
 */
export function unsettleSend(env: NodeJS.ProcessEnv, path: string): boolean {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return false;
  }
  const settled = rec.settled_send as SettledSend | undefined;
  if (!isRecord(settled) || !isRecord(settled.line)) return true;
  if (settled.line.cost > 0) {
    const back = { time: settled.line.time, profile: rec.profile as string, command: 'usage --reconcile', endpoint: '/v1/batches', reconciles: settled.line.id, real_cost: 0, cost: -settled.line.cost };
    if (appendUsage(env, back)) return false;
  }
  const { settled_send: _s, ...held } = rec;
  try {
    writeFileSync(`${path}.part`, JSON.stringify({ ...held, usd: settled.usd }), { mode: 0o600 });
    renameSync(`${path}.part`, path);
  } catch {
    // Its line is taken back: the hold, joined, counts its bound again where it can be written; else 0, its batch's cost counted once.
  }
  return true;
}
