/**
 * `usage --reconcile` for a kept `batch-sent-…` hold (a budgeted `batch create` sent and never answered: sent-create.ts): it stood at
 * its bound for its 48 hours where nothing joined it to a batch (its create record gone, written again by `--new`, or never rerun). A batch it made ran within its window (24 hours from its making, a little after the send) and was charged by
 * an hour after: once that has passed, what it was charged is at most what its key spent from the send to the window's end (a
 * management key's analytics), less what the ledger puts there already (the calls it names, the batches whose cost it has, the key's
 * other holds settled in the same run: reconcile-joint.ts): settled at that, never above the bound, its hold let go. Over, never under.
 */
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { writeWhole } from '../../internal/write-whole.js';
import { join } from 'node:path';
import { rootKey, sameRoot } from '../../internal/api-root.js';
import { holdsDir } from './budget-lock.js';
import { appendUsage } from './ledger.js';
import { ledgerLinesWith } from './ledger-find.js';
import { CLOCK_MARGIN_MS, SETTLE_HELD_AFTER_MS, type HeldReport } from './reconcile-held.js';
import { heldUntil, spanOf, type SettleHoldsOptions } from './reconcile-batch.js';
import type { KeySpendHold } from './reconcile-joint.js';
import { SENT_CREATE, unheardSend, type SettledSend } from './sent-create.js';
import { SKEW_MS } from './sent-link.js';

/** A batch runs at most this long from its making (its `completion_window`, 24h): then it expires, charged for what ran. */
export const BATCH_WINDOW_MS = 24 * 3_600_000;

interface SentHold {
  profile?: unknown;
  usd?: unknown;
  key_hash?: unknown;
  api_root?: unknown;
  model?: unknown;
  time?: unknown;
  sent?: { sent_at?: unknown };
}

/** The kept sends of `profile` at `apiRoot` whose record is gone, ready to be settled by their key's spend (reconcile-joint.ts); the others said in `report` (ids: the holds' names). */
export async function lostSendHolds(o: SettleHoldsOptions, report: HeldReport): Promise<KeySpendHold[]> {
  const dir = holdsDir(o.env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(SENT_CREATE) && n.endsWith('.json'));
  } catch {
    return [];
  }
  const ready: KeySpendHold[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let rec: SentHold;
    try {
      rec = JSON.parse(readFileSync(path, 'utf8')) as SentHold;
    } catch {
      continue;
    }
    if (typeof rec.usd !== 'number' || !(rec.usd > 0)) continue;
    if (typeof rec.api_root === 'string' && !sameRoot(rec.api_root, o.apiRoot)) continue;
    // Another profile's kept send of a key it names is settled with this profile's of that key (reconcile-batch.ts says why).
    const own = rec.profile === o.profile;
    if (!own && (typeof rec.profile !== 'string' || typeof rec.key_hash !== 'string')) continue;
    const profile = rec.profile as string;
    // Its record still says unanswered: a rerun, or a command that sees its batch, may still join it. Settled all the same, its
    // hold kept at 0 naming the settling, which a join takes back (sent-create.ts unsettleSend()): never counted twice.
    const joinable = unheardSend(rec.sent) !== undefined;
    const id = name.slice(0, -'.json'.length);
    const keptAt = statSync(path).ctimeMs;
    const keep = (line: SettledSend['line']) => {
      if (!joinable) rmSync(path, { force: true });
      else writeWhole(path, JSON.stringify({ ...rec, usd: 0, settled_send: { line, usd: rec.usd as number, kept_at: keptAt } satisfies SettledSend, time: new Date(o.now).toISOString() }));
    };
    // Settled already (a run killed -9 after its line, before its hold was rewritten): that settling is kept, not made twice.
    const earlier = settlingOf(o.env, id);
    if (earlier) {
      keep(earlier);
      continue;
    }
    const start = Date.parse(typeof rec.sent?.sent_at === 'string' ? rec.sent.sent_at : '');
    const hash = typeof rec.key_hash === 'string' ? rec.key_hash : o.keyHash;
    if (!hash || Number.isNaN(start)) {
      if (own) report.unsettled.push({ id, why: `its hold names no ${hash ? '' : 'key or no '}time it was sent (made by an older router): held ${heldUntil(rec)}` });
      continue;
    }
    // The window of a batch it may have made: from the send (the two clocks apart) to 24 hours after that batch's making.
    const w = { start: start - SKEW_MS - CLOCK_MARGIN_MS, end: start + BATCH_WINDOW_MS + SKEW_MS + CLOCK_MARGIN_MS };
    // Until then, and the hour the service takes to count it after, money may still be charged.
    if (o.now - w.end < SETTLE_HELD_AFTER_MS) {
      if (own) report.waiting.push(id);
      continue;
    }
    const not = await o.ask.whyNot(hash);
    if (not === 'stop') break;
    if (not) {
      if (own) report.unsettled.push({ id, why: `${not}: held ${heldUntil(rec)}` });
      continue;
    }
    const model = typeof rec.model === 'string' ? rec.model : undefined;
    ready.push({
      id,
      key_hash: hash,
      window: w,
      bound: rec.usd,
      completed: undefined,
      report,
      settle: (charged, u) => {
        // At the window's end: the latest a batch it made could have been charged.
        const time = new Date(start + BATCH_WINDOW_MS).toISOString();
        const problem = appendUsage(o.env, { time, profile, command: 'usage --reconcile', endpoint: '/v1/batches', ...(model ? { model } : {}), id, cost: charged, api_root: rootKey(o.apiRoot), key_hash: hash, ...spanOf(u) });
        if (problem) throw Object.assign(new Error(problem), { ledger: true });
        keep({ id, time, cost: charged });
        return { time, model };
      },
    });
  }
  return ready;
}

/** The ledger's settling of the kept send `id` (its line names it), where a run wrote one and no join took it back. */
function settlingOf(env: NodeJS.ProcessEnv, id: string): SettledSend['line'] | undefined {
  const lines = ledgerLinesWith(env, JSON.stringify(id));
  // One taken back since (its batch joined, the hold then kept by another process): not this hold's settling any more.
  if (lines.some((l) => l.reconciles === id)) return undefined;
  const line = lines.find((l) => l.id === id && l.command === 'usage --reconcile');
  return line && typeof line.time === 'string' && typeof line.cost === 'number' ? { id, time: line.time, cost: line.cost } : undefined;
}
