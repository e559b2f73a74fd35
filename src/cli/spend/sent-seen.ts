/** Batches a command sees (get, a watch, results, list) joined to the budgets' holds kept for creates never answered (kit/spend/sent-link.ts). */
import { indexedBatches } from '../../batch/local-index.js';
import { linkSent, type SeenBatch } from '../../kit/spend/sent-link.js';

/** Joins what fits; never fails the command that saw the batches (a hold left unjoined stays counted). */
export function linkSeen(env: NodeJS.ProcessEnv, root: string, seen: readonly SeenBatch[]): void {
  try {
    // Batches answered to their own create on this machine (the index names their input file) are none of an unanswered one's.
    linkSent(env, root, seen, () => new Set(indexedBatches(env, root).flatMap((b) => (b.input ? [b.id] : []))));
  } catch {
    // Unreadable holds or index: nothing joined.
  }
}
