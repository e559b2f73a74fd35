import type { Ctx } from '../http/http.js';
import { newestFirst, type BatchRecord, type BatchStatus } from '../state/batch-store.js';
import { LISTABLE, bad, publicBatch } from './batch-rules.js';

/** GET /v1/batches: the caller's workspace, newest first, filtered and paged. */
export function listBatches(ctx: Ctx, sorted: readonly BatchRecord[], find: (id: string) => BatchRecord | undefined): void {
  const q = ctx.url.searchParams;
  const limitRaw = q.get('limit');
  let limit = 20;
  if (limitRaw !== null) {
    if (!/^\d+$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 100) bad('invalid list query: limit must be an integer from 1 to 100');
    limit = Number(limitRaw);
  }
  const statuses = q.getAll('status');
  for (const s of statuses) {
    if (s === 'finalizing' || s === 'cancelling') bad(`invalid list query: status "${s}" cannot be filtered on: stored jobs collapse it into in_progress`);
    if (!LISTABLE.includes(s)) bad(`invalid list query: status must be one of ${LISTABLE.join(', ')}`);
  }
  const bound = (name: string): number | undefined => {
    const v = q.get(name);
    if (v === null) return undefined;
    if (!/^\d+$/.test(v)) bad(`invalid list query: ${name} must be digits only (a Unix timestamp)`);
    return Number(v);
  };
  const after = q.get('after');
  if (after !== null && after === '') bad('invalid list query: after must not be empty');
  const createdAfter = bound('created_after');
  const createdBefore = bound('created_before');
  const collapse = (s: BatchStatus) => (s === 'finalizing' || s === 'cancelling' ? 'in_progress' : s);
  // A cursor is a position in the newest-first order, not a member of the filtered listing, so a
  // batch that changes status after its page was read still marks where the next page starts.
  const cursor = after === null ? undefined : find(after);
  if (after !== null && (!cursor || cursor.workspace !== ctx.workspace)) bad(`invalid list query: after "${after}" is not a batch of this workspace`);
  const matches = (r: BatchRecord) =>
    (statuses.length === 0 || statuses.includes(collapse(r.status))) &&
    (createdAfter === undefined || r.created_at > createdAfter) &&
    (createdBefore === undefined || r.created_at < createdBefore);
  // The workspace's batches are kept newest first: a page walks from the cursor (or the first batch
  // created before `created_before`), one more than asked, and stops at `created_after`: a listing
  // costs what it shows, not the workspace's whole history.
  let start = cursor ? firstWhere(sorted, (r) => newestFirst(r, cursor) > 0) : 0;
  if (createdBefore !== undefined) start = Math.max(start, firstWhere(sorted, (r) => r.created_at < createdBefore));
  const items: BatchRecord[] = [];
  for (let i = start; i < sorted.length && items.length <= limit; i++) {
    const r = sorted[i]!;
    if (createdAfter !== undefined && r.created_at <= createdAfter) break;
    if (matches(r)) items.push(r);
  }
  const page = items.slice(0, limit);
  ctx.send(200, {
    object: 'list',
    // A listed job reads as the filter sees it: finalizing and cancelling are stored as in_progress.
    data: page.map((r) => ({ ...publicBatch(r), status: collapse(r.status) })),
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
    has_more: items.length > limit,
  });
}

/** The index of the first batch for which `past` holds, in a list where it holds from some point on (binary search). */
function firstWhere(sorted: readonly BatchRecord[], past: (r: BatchRecord) => boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (past(sorted[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
