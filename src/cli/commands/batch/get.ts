/** `router batch get`: one batch, its results, or a watch of it. */
import type { Batch } from '../../../client/types.js';
import { usage } from '../../exit-codes.js';
import type { RunContext } from '../../run.js';
import { batchError, batchOf402 } from '../../../batch/results.js';
import { describeBatch, tsvLine } from './format.js';
import type { GetOpts } from './flags.js';
import { batchEndFailure, logBatch, logOwed, openResults, writeResults } from './results.js';
import { watchAndFinish } from './watch.js';
import { counted } from '../../../internal/counted.js';
import { linkSeen } from '../../spend/sent-seen.js';

export async function runGet(ctx: RunContext<GetOpts>, id: string): Promise<void> {
  const { io, opts, signal } = ctx;
  if (!id.trim()) throw usage('batch id must not be empty');
  const toStdout = opts.results === true || opts.results === '-';
  if (opts.json && opts.results !== undefined && toStdout) throw usage(`${io.jsonFlag} and --results to stdout cannot be combined`);
  const target = opts.results === undefined ? undefined : await openResults(opts.results);
  const { client } = await ctx.connect();
  if (opts.watch) return watchAndFinish(ctx, client, id, undefined, target);
  try {
    if (target) {
      const b = await writeResults(io, client, id, target, signal).catch((err: unknown) => {
        logOwed(ctx, client.core.apiRoot, err);
        throw err;
      });
      linkSeen(ctx.env, client.core.apiRoot, [b]);
      logBatch(ctx, b);
      io.info(`${counted(b.request_counts.completed + b.request_counts.failed, 'result')} of ${id} (${b.status})`);
      return exitStatus(opts, b);
    }
    let b: Batch;
    try {
      b = await client.batches.get(id, { signal });
    } catch (err) {
      // The spec's 402 body is the batch metadata with results null: it is data, printed as a batch is.
      const owed = batchOf402(err);
      if (owed) printBatch(ctx, owed);
      const explained = batchError(err, id);
      logOwed(ctx, client.core.apiRoot, explained);
      throw explained;
    }
    // Before its cost is recorded: the budgets' hold an unanswered create kept for it is settled by that cost, not kept beside it.
    linkSeen(ctx.env, client.core.apiRoot, [b]);
    logBatch(ctx, b);
    printBatch(ctx, b);
    exitStatus(opts, b);
  } finally {
    if (target && 'file' in target) target.file.abortSync();
    await client.close();
  }
}

function printBatch({ io, opts }: RunContext<GetOpts>, b: Batch): void {
  if (opts.json) io.json(b);
  else if (io.stdoutTTY) io.out(describeBatch(io, b));
  else io.out(tsvLine(b));
}

/** --exit-status: a batch that ended failed, expired or cancelled, or completed with every request failed, exits 9 (as a watch does). */
function exitStatus(opts: GetOpts, b: Batch): void {
  const failure = opts.exitStatus ? batchEndFailure(b) : undefined;
  if (failure) throw failure;
}
