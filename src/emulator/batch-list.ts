import type { Ctx } from './http.js';
import type { BatchRecord, BatchStatus } from './batch-store.js';
import { LISTABLE, bad, publicBatch } from './batch-rules.js';

/** GET /v1/batches: the caller's workspace, newest first, filtered and paged. */
export function listBatches(ctx: Ctx, all: BatchRecord[]): void {
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
  // Newest first; a cursor is a position in that order, not a member of the filtered listing, so a
  // batch that changes status after its page was read still marks where the next page starts.
  const newestFirst = (a: BatchRecord, b: BatchRecord) => b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
  const mine = all.filter((r) => r.workspace === ctx.workspace);
  const cursor = after === null ? undefined : mine.find((r) => r.id === after);
  if (after !== null && !cursor) bad(`invalid list query: after "${after}" is not a batch of this workspace`);
  const items = mine
    .filter((r) => statuses.length === 0 || statuses.includes(collapse(r.status)))
    .filter((r) => createdAfter === undefined || r.created_at > createdAfter)
    .filter((r) => createdBefore === undefined || r.created_at < createdBefore)
    .filter((r) => !cursor || newestFirst(cursor, r) < 0)
    .sort(newestFirst);
  const page = items.slice(0, limit);
  ctx.send(200, {
    object: 'list',
    data: page.map(publicBatch),
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
    has_more: items.length > limit,
  });
}
