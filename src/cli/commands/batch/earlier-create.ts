/** A `batch create` run again after its answer was never heard (killed, or the answer lost): its batch, never a second one unasked. */
import type { RouterClient } from '../../../client/index.js';
import type { Batch } from '../../../client/types.js';
import { findCreated } from '../../../batch/find-created.js';
import { indexedBatches } from '../../../batch/local-index.js';
import { clearCreate, createRecordPath, pendingCreate } from '../../../batch/pending-create.js';
import { settleEarlierSend } from '../../spend/batch-estimate.js';
import { counted } from '../../../internal/counted.js';
import { CliError, EXIT } from '../../exit-codes.js';
import { withInstalledDocs } from '../../io/installed-docs.js';
import type { RunContext } from '../../run.js';
import type { CreateOpts } from './flags.js';

export interface CreateShape {
  file: string;
  endpoint: string;
  model: string;
  count: number;
}

/**
 * The batch an unanswered earlier create of the same file and options made, found where the
 * service can be asked; undefined: none was made (or --new), so this create is sent. Where it
 * cannot be asked (no listing), exit 8 naming --new; a record there that cannot be read, exit 1 (its batch may exist).
 */
export async function earlierCreate(ctx: RunContext<CreateOpts>, client: RouterClient, key: string, shape: CreateShape): Promise<Batch | undefined> {
  const prior = pendingCreate(ctx.env, key);
  if (!prior) return undefined;
  const name = shape.file === '-' ? 'these requests' : shape.file;
  if ('damaged' in prior) {
    const what = `${createRecordPath(ctx.env, key)}, the record of an earlier create of ${name} with these options, ${prior.damaged}`;
    if (!ctx.opts.new) throw new CliError(`${what}: the batch it stands for may have been made, so nothing is sent; router batch list shows whether it was, then move the record away to send it (or --new sends it anyway, billed twice if it was)`, EXIT.FAILURE);
    ctx.io.note(`${what}; sent as asked (--new): if it made a batch, both are billed`);
    return undefined;
  }
  // A record naming its batch was written once the answer came: that create was stopped after it (as it said the id, or before).
  const earlier = prior.batch_id && prior.watching
    ? `an earlier create --watch of ${name} with these options made ${prior.batch_id} (sent at ${prior.sent_at}) and was stopped before its watch saw it end`
    : prior.batch_id
      ? `an earlier create of ${name} with these options made ${prior.batch_id} (sent at ${prior.sent_at}) and was stopped as it said so (its id may have been printed)`
      : `an earlier create of ${name} with these options, sent at ${prior.sent_at}, was never answered`;
  if (ctx.opts.new) {
    ctx.io.note(`${earlier}; sent again as asked (--new): if it made a batch, both are billed`);
    clearCreate(ctx.env, key);
    return undefined;
  }
  // What it made, once known: the budgets' hold its send kept (if killed under a budget) becomes that batch's, or goes.
  const made = (id: string | undefined) => settleEarlierSend(ctx, { record: createRecordPath(ctx.env, key), sent_at: prior.sent_at }, id);
  if (prior.batch_id) {
    await made(prior.batch_id);
    ctx.io.note(`${earlier}: not sent again${ctx.opts.watch ? '; watching it' : ''} (--new makes another)`);
    return client.batches.get(prior.batch_id, { signal: ctx.signal });
  }
  const refuse = (why: string) => new CliError(`${earlier}, and ${why}; to send it anyway (it may be billed twice): --new; see ${withInstalledDocs('docs/real-service-batches.md')}`, EXIT.NETWORK);
  if (prior.after === 'unlisted' || client.batches.hasListing === false) throw refuse('this service lists no batches to find its batch by');
  if (prior.after === 'unknown') throw refuse('the listing could not be read before it, so its batch cannot be told');
  // Batches of this machine's index made from an input were answered to their create: not the unanswered one's (a batch only seen
  // by `batch get` or a watch is in the index too, and may be this create's).
  const skip = new Set(indexedBatches(ctx.env, client.core.apiRoot).flatMap((b) => (b.input ? [b.id] : [])));
  const found = await findCreated(client, { after: prior.after, endpoint: shape.endpoint, model: shape.model, count: shape.count, skip }, ctx.signal);
  if (found.length > 1) throw refuse(`${counted(found.length, 'batch', 'batches')} match it: ${found.map((b) => b.id).join(', ')}`);
  if (found[0]) {
    await made(found[0].id);
    ctx.io.note(`${earlier}; found its batch in the listing: ${found[0].id}; not sent again`);
    return found[0];
  }
  ctx.io.note(`${earlier}; the listing shows it made no batch: sending it`);
  await made(undefined);
  clearCreate(ctx.env, key);
  return undefined;
}
