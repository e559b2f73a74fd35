/** `router batch list`: a page of batches, or all of them. */
import type { LISTABLE_BATCH_STATUSES } from '../../../client/facts.js';
import type { BatchList } from '../../../client/types.js';
import { isNoListing } from '../../../client/resources/batches.js';
import { usage } from '../../exit-codes.js';
import type { RunContext } from '../../run.js';
import type { ListOpts } from './flags.js';
import { tableRows, tsvLine } from './format.js';
import { table } from '../../io/table.js';
import { linkSeen } from '../../spend/sent-seen.js';

/** Digits pass through as a Unix timestamp; anything else is read as a date. */
export function toTimestamp(flag: string, value: string): string {
  if (/^\d+$/.test(value)) return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw usage(`${flag} must be a Unix timestamp or a date (e.g. 2026-11-01 or 2026-11-01T12:00:00Z), got "${value}"`);
  return String(Math.floor(ms / 1000));
}

export async function runList(ctx: RunContext<ListOpts>): Promise<void> {
  const { io, opts, signal, connect } = ctx;
  if (opts.after !== undefined && opts.after === '') throw usage('--after must not be empty');
  if (opts.json && opts.jsonl) throw usage(`${io.jsonFlag} and --jsonl cannot be combined`);
  const query = {
    limit: opts.limit,
    after: opts.after,
    status: opts.status as (typeof LISTABLE_BATCH_STATUSES)[number][] | undefined,
    created_after: opts.createdAfter === undefined ? undefined : toTimestamp('--created-after', opts.createdAfter),
    created_before: opts.createdBefore === undefined ? undefined : toTimestamp('--created-before', opts.createdBefore),
  };
  const { client } = await connect();
  try {
    const pages: BatchList[] = [];
    try {
      if (opts.all) for await (const page of client.batches.listAll(query, { signal })) pages.push(page);
      else pages.push(await client.batches.list(query, { signal }));
      // The service's own listing: a batch of it may be the one an unanswered create made (the local index's never is).
      linkSeen(ctx.env, client.core.apiRoot, pages.flatMap((p) => p.data));
    } catch (err) {
      if (!isNoListing(err)) throw err;
      // No listing at this service: the batches this machine made, as last seen, with the same filters.
      const { localPage } = await import('../../../batch/local-index.js');
      pages.length = 0;
      pages.push(localPage(ctx.env, client.core.apiRoot, query, opts.all));
      if (!io.quiet) io.note(`${client.core.apiRoot} lists no batches: these are the ones made from this machine, each as last seen (router batch get ID asks the service)`);
    }
    const items = pages.flatMap((p) => p.data);
    const last = pages.at(-1)!;
    // A page is a part: said on stderr however it is printed, but for --json, whose page holds has_more itself.
    const more = () => {
      if (last.has_more) io.note(`more: the next page with --after ${last.last_id}, every page with --all`);
    };
    if (opts.json) {
      if (!opts.all) io.json(pages[0]);
      else io.json({ object: 'list', data: items, first_id: items[0]?.id ?? null, last_id: items.at(-1)?.id ?? null, has_more: false });
      return;
    }
    if (opts.jsonl) {
      for (const b of items) io.jsonl(b);
      return more();
    }
    if (!io.stdoutTTY) {
      for (const b of items) io.out(tsvLine(b));
      return more();
    }
    if (items.length === 0) {
      io.info('no batches');
      return;
    }
    const { head, rows } = tableRows(items, io.columns!);
    io.out(table(io, head, rows, { cutLines: true }));
    more();
  } finally {
    await client.close();
  }
}
