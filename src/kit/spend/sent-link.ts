/**
 * A kept `batch-sent-…` hold (a `batch create` sent and never answered: sent-create.ts) joined to the batch it made once a later
 * command sees that batch (`batch get`, a watch, results, `batch list`): the hold becomes the batch's own (`batch-ID.json`), which the
 * batch's cost removes once it is recorded ended, and the create's record names the batch (its rerun says so, never sends again).
 * The API has no input file id, so a batch is the create's by what both say: the create's record (its API root, endpoint, model and
 * request count) and the batch's, made between the send and the create's end (within SKEW_MS, clocks of two machines). A batch taken
 * by two kept sends, or a send by two batches seen, is joined to none: the hold stays (counted), as before.
 */
import { readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isRecord } from '../../internal/shape.js';
import { sameRoot } from '../../internal/api-root.js';
import { writeWhole } from '../../internal/write-whole.js';
import { holdsDir } from './budget-lock.js';
import { batchHoldPath } from './ledger.js';
import { batchRecorded, SENT_CREATE, unsettleSend } from './sent-create.js';

/** How far the service's clock (a batch's `created_at`) may be from this machine's (the create's `sent_at`). */
export const SKEW_MS = 5 * 60_000;

/** What a batch seen says of itself (the API's fields). */
export interface SeenBatch {
  id: string;
  endpoint: string;
  model: string;
  /** Unix seconds, the service's clock. */
  created_at: number;
  request_counts: { total: number };
}

interface Kept {
  path: string;
  record: string;
  rec: Record<string, unknown>;
  from: number;
  to: number;
}

/** The kept sends whose record still says unanswered and names the create's shape. */
function keptSends(dir: string): Kept[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(SENT_CREATE) && n.endsWith('.json'));
  } catch {
    return [];
  }
  const kept: Kept[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const sent: unknown = (JSON.parse(readFileSync(path, 'utf8')) as { sent?: unknown }).sent;
      if (!isRecord(sent) || typeof sent.record !== 'string' || typeof sent.sent_at !== 'string') continue;
      const rec: unknown = JSON.parse(readFileSync(sent.record, 'utf8'));
      if (!isRecord(rec) || rec.sent_at !== sent.sent_at || rec.batch_id !== undefined || typeof rec.api_root !== 'string') continue;
      // Made after the send and before the create was seen ended (its hold was kept then: renamed, so its ctime), give or take the clocks.
      // A hold settled by spend meanwhile was rewritten then: when it was kept is in it.
      const settled = (JSON.parse(readFileSync(path, 'utf8')) as { settled_send?: { kept_at?: unknown } }).settled_send;
      const keptAt = typeof settled?.kept_at === 'number' ? settled.kept_at : statSync(path).ctimeMs;
      kept.push({ path, record: sent.record, rec, from: Date.parse(sent.sent_at) - SKEW_MS, to: keptAt + SKEW_MS });
    } catch {
      // Taken meanwhile, damaged, or its record gone: left as it is.
    }
  }
  return kept;
}

const fits = (k: Kept, root: string, b: SeenBatch) =>
  sameRoot(k.rec.api_root as string, root) && k.rec.endpoint === b.endpoint && k.rec.model === b.model && k.rec.count === b.request_counts?.total && b.created_at * 1000 >= k.from && b.created_at * 1000 <= k.to;

/**
 * Joins kept sends to the batches `seen` at `root` that fit them one to one; `answered(id)`: the batch was answered to its own create
 * on this machine (not an unanswered one's; read only where a batch fits). A batch whose cost the ledger has already: the hold goes.
 * The ids joined.
 */
export function linkSent(env: NodeJS.ProcessEnv, root: string, seen: readonly SeenBatch[], answered: () => Set<string>): string[] {
  const kept = keptSends(holdsDir(env));
  if (kept.length === 0) return [];
  let mine: Set<string> | undefined;
  const pairs = kept.map((k) => seen.filter((b) => fits(k, root, b) && !(mine ??= answered()).has(b.id)));
  const linked: string[] = [];
  kept.forEach((k, i) => {
    const b = pairs[i]!.length === 1 ? pairs[i]![0]! : undefined;
    if (!b || pairs.filter((p) => p.some((x) => x.id === b.id)).length !== 1) return;
    if (!unsettleSend(env, k.path)) return;
    try {
      if (batchRecorded(env, b.id)) rmSync(k.path, { force: true });
      else renameSync(k.path, batchHoldPath(env, b.id));
    } catch {
      return; // Taken by another process meanwhile.
    }
    try {
      writeWhole(k.record, `${JSON.stringify({ ...k.rec, batch_id: b.id })}\n`, true);
    } catch {
      // The hold is the batch's all the same; a rerun looks for it as before.
    }
    linked.push(b.id);
  });
  return linked;
}
