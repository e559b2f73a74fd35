/**
 * What the holds on the budgets (budget-hold.ts) keep of a profile's budgets, read from `budget-holds/`: stale holds
 * removed, or kept counted where their call may have spent (hold-record.ts).
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readLocalText } from '../../internal/local-file.js';
import { clearLeftMoves } from '../../internal/lock-mark.js';
import { processAlive } from '../../internal/process.js';
import { holdsDir } from './budget-lock.js';
import { BATCH_HOLD_MAX_AGE_MS, HOLD_MAX_AGE_MS, UNRECORDED, isStale, orphanKeeps, orphaned, type HoldRecord } from './hold-record.js';
import { joinableSettled, SENT_CREATE } from './sent-create.js';

/** A batch hold's `.part` (renamed into place by a writer not under the lock) is a write under way, unless left this long. */
const PART_WRITE_MS = 60_000;

function writtenBefore(path: string, when: number): boolean {
  try {
    return statSync(path).mtimeMs < when;
  } catch {
    return false;
  }
}

export interface Held {
  /** What calls under way hold (each ends with its process). */
  usd: number;
  calls: number;
  /**
   * What holds kept past their process hold: batches not yet seen ended, calls whose cost the ledger
   * could not take. Waiting does not free it: it counts as spent.
   */
  kept?: number | undefined;
}

/**
 * What the holds of other calls keep of this profile's budgets; stale holds are removed. Call it holding the lock.
 * `tidy` false (`router usage`, a dry run: no lock, nothing written): nothing is removed, and the bound of a call
 * whose process is gone counts as kept, as the next check would count it once it has put it in the ledger.
 */
export function heldByOthers(env: NodeJS.ProcessEnv, profile: string, mine?: { readonly path: string }, now = Date.now(), tidy = true): Held {
  const dir = holdsDir(env);
  const held: Held = { usd: 0, calls: 0 };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return held;
  }
  if (tidy) clearLeftMoves(dir, names);
  for (const name of names) {
    // The lock, its mark and guards, and what a release killed midway left (clearLeftMoves's).
    if (name.startsWith('.lock')) continue;
    const path = join(dir, name);
    if (path === mine?.path) continue;
    let rec: Partial<HoldRecord> & { batch_id?: string; settled_send?: unknown };
    try {
      // A file half-written is one whose writer was killed: writes are made under the lock, or renamed into place.
      rec = name.endsWith('.json') ? (JSON.parse(readLocalText(path)) as Partial<HoldRecord>) : { pid: Number(name.split('-')[0]) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      rec = {};
    }
    // A batch's hold belongs to no process: it holds until the batch's cost is recorded (ledger.ts removes it).
    // So does one of a call whose cost the ledger could not take (unrecorded()): for a day.
    const stale = !name.endsWith('.json') && !Number.isInteger(rec.pid) ? writtenBefore(path, now - PART_WRITE_MS)
      : name.startsWith('batch-')
      ? typeof rec.usd !== 'number' || (!(now - Date.parse(rec.time ?? '') <= BATCH_HOLD_MAX_AGE_MS) && !(name.startsWith(SENT_CREATE) && joinableSettled(rec)))
      : name.startsWith(UNRECORDED) ? typeof rec.usd !== 'number' || !(now - Date.parse(rec.time ?? '') <= HOLD_MAX_AGE_MS)
      : !name.endsWith('.json') ? !processAlive(rec.pid ?? 0) : isStale(rec, now);
    if (stale) {
      const orphan = name.endsWith('.json') && !name.startsWith('batch-') && !name.startsWith(UNRECORDED);
      if (!tidy) {
        const keeps = orphan && rec.profile === profile ? orphanKeeps(env, rec, now) : 0;
        if (keeps) held.kept = (held.kept ?? 0) + keeps;
        continue;
      }
      const kept = orphan ? orphaned(env, path, rec, now) : 0;
      if (kept && rec.profile === profile) held.kept = (held.kept ?? 0) + kept;
      rmSync(path, { force: true });
    } else if (name.endsWith('.json') && rec.profile === profile) {
      if (name.startsWith('batch-') || name.startsWith(UNRECORDED)) held.kept = (held.kept ?? 0) + rec.usd!;
      else {
        held.usd += rec.usd!;
        held.calls++;
      }
    }
  }
  return held;
}
