/** `router batch create`: check a file, create one batch from it (a lost answer found in the listing), maybe watch it. */
import type { Batch } from '../../../client/types.js';
import { ProtocolError } from '../../../client/errors.js';
import { findCreated, watermark } from '../../../batch/find-created.js';
import { clearCreate, createKey, createRecordPath, lockCreate, recordCreate, type PendingCreate } from '../../../batch/pending-create.js';
import { describeHolder } from '../../../internal/file-lock.js';
import { earlierCreate } from './earlier-create.js';
import { createHash } from 'node:crypto';
import { checkInputFile, scanRequests } from '../../../batch/scan.js';
import { isPipe } from '../../../internal/named-input.js';
import { requestStream } from '../../../batch/upload.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import type { RunContext } from '../../run.js';
import type { CreateOpts } from './flags.js';
import { spoolPiped, spoolStdin } from './stdin.js';
import { openResults, type ResultsTarget } from './results.js';
import { watchAndFinish } from './watch.js';
import { ask } from '../../io/ask.js';
import { counted } from '../../../internal/counted.js';
import { rootKey } from '../../../internal/api-root.js';
import { withinMs } from '../../../internal/abort-fanout.js';
import { withInstalledDocs } from '../../io/installed-docs.js';

const CONFIRM_BYTES = 50 * 1024 * 1024;
/** How long a create whose answer was lost looks for its batch in the listing. */
const LOOKUP_MS = 15_000;

async function checkedPath(ctx: RunContext<CreateOpts>, file: string): Promise<{ path: string; cleanup: () => void }> {
  if (file === '-') {
    if (ctx.io.stdinTTY) throw usage('reading requests from stdin, but stdin is a terminal: pipe a JSONL file in');
    return spoolStdin(ctx.io.stdin, ctx.signal);
  }
  // A pipe named as a file (`<(cmd)`, /dev/stdin) is read once, as stdin is.
  if (isPipe(file)) return spoolPiped(file, ctx.signal);
  checkInputFile(file);
  return { path: file, cleanup: () => {} };
}

async function confirmLarge(ctx: RunContext<CreateOpts>, count: number, bytes: number): Promise<void> {
  const { io } = ctx;
  if (bytes <= CONFIRM_BYTES || ctx.opts.yes || !io.stdinTTY || !io.stderrTTY) return;
  if (!io.canPrompt) throw usage(`--no-input: ${(bytes / 1024 / 1024).toFixed(0)} MB needs confirming; pass --yes`);
  const { confirm } = await import('@inquirer/prompts');
  const ok = await ask(io, confirm, { message: `Send ${counted(count, 'request')} (${(bytes / 1024 / 1024).toFixed(0)} MB) as one batch?`, default: true });
  if (!ok) throw new CliError('cancelled; nothing was sent', EXIT.USAGE);
}

export async function runCreate(ctx: RunContext<CreateOpts>, file: string): Promise<void> {
  const { io, opts, signal } = ctx;
  const following = opts.watch ? '--watch' : opts.results !== undefined ? '--results' : undefined;
  if (opts.dryRun && following) throw usage(`--dry-run sends nothing: it does not go with ${following}`);
  if (opts.results !== undefined && !opts.watch) throw usage('--results goes with --watch (or use: router batch get ID --results)');
  const { path, cleanup } = await checkedPath(ctx, file);
  let target: ResultsTarget | undefined;
  let unlockCreate: (() => void) | undefined;
  try {
    const hash = createHash('sha256');
    const scan = await scanRequests(path, file === '-' ? 'stdin' : file, { endpoint: opts.endpoint, model: opts.model, onRead: (bytes) => hash.update(bytes) });
    if (opts.results !== undefined) target = await openResults(opts.results, file === '-' ? undefined : path);
    const connected = await ctx.connect();
    const { client, settings } = connected;
    const model = scan.model ?? settings.model;
    if (!model) throw usage('no model: the bodies name none; give --model (or set a default: router config set model …)');
    const { checkBatchSpend, estimateJson, estimateLine, holdFoundBatch } = await import('../../spend/batch-estimate.js');
    const closing = async (err: unknown): Promise<never> => {
      await client.close();
      throw err;
    };
    if (opts.dryRun) {
      const estimate = await checkBatchSpend(ctx, connected, { path, endpoint: scan.endpoint, model }).catch(closing);
      await client.close();
      if (opts.json) io.json({ requests: scan.count, endpoint: scan.endpoint, model, cost_bound: estimate ? estimateJson(estimate) : null });
      else if (estimate) io.note(estimateLine(estimate));
      // Said piped too, as batch run --dry-run does: exit 0 with nothing made must not pass for a batch made.
      io.note(`dry run: ${counted(scan.count, 'request')} to ${scan.endpoint} with ${model} checked; nothing was sent`);
      return;
    }
    const provider: { only?: string[]; allow_fallbacks?: boolean } = {};
    if (opts.providerOnly) provider.only = opts.providerOnly;
    if (opts.fallbacks === false) provider.allow_fallbacks = false;
    const head = { endpoint: scan.endpoint, model, completion_window: '24h' as const, ...(Object.keys(provider).length ? { provider } : {}) };
    const key = createKey(client.core.apiRoot, hash.digest('hex'), head);
    // An identical create under way (a script that runs it twice at once): this one waits for it, then goes
    // on as a rerun would (its id printed, this one makes a new batch; killed before, its batch is found).
    unlockCreate = await lockCreate(ctx.env, key, (holder) => io.info(`waiting for an identical create of ${file === '-' ? 'these requests' : file} under way (${describeHolder(holder)}) to end`), signal).catch(closing);
    const unlock = () => {
      unlockCreate?.();
      unlockCreate = undefined;
    };
    const earlier = await earlierCreate(ctx, client, key, { file, endpoint: scan.endpoint, model, count: scan.count }).catch(closing);
    // Checked only where something is to be sent: a rerun that finds its earlier batch sends nothing.
    const estimate = earlier ? undefined : await checkBatchSpend(ctx, connected, { path, endpoint: scan.endpoint, model }).catch(closing);
    if (!earlier && file !== '-') await confirmLarge(ctx, scan.count, scan.bytes);
    // What the batch will be newer than, in the service's listing (a lost answer is looked for
    // there). Unknown (the listing failed): a lost answer is not looked for.
    const mark = earlier ? undefined : await watermark(client, signal).catch((err: unknown) => {
      if (signal.aborted) throw err;
      return 'unknown' as const;
    });
    const after = mark === 'unlisted' || mark === 'unknown' ? undefined : mark;
    // Where nothing lists batches, a batch a lost answer made can never be found (nor told from a second one).
    const checkWith = () => (client.batches.hasListing === false ? `sent at ${new Date().toISOString()}; this service lists no batches, so it cannot be looked for: sending ${file} again is refused (exit 8) unless --new, which may make (and bill) a second batch; see ${withInstalledDocs('docs/real-service-batches.md')}` : `Check with: router batch list${after ? ` --created-after ${after.created_at - 1}` : ''}`);
    let created: Batch;
    let record: PendingCreate | undefined;
    let uploaded = false;
    const requests = requestStream(scan);
    if (earlier) created = earlier;
    else try {
      signal.throwIfAborted();
      // What the batch will say of itself: a later command that sees it joins it to this send (src/kit/spend/sent-link.ts).
      record = { sent_at: new Date().toISOString(), after: mark!, input: file === '-' ? 'stdin' : file, api_root: rootKey(client.core.apiRoot), endpoint: scan.endpoint, model, count: scan.count };
      recordCreate(ctx.env, key, record);
      // From here the batch may exist: a create that ends (or is killed) unanswered keeps its budgets' hold.
      estimate?.hold?.sending({ record: createRecordPath(ctx.env, key), sent_at: record.sent_at });
      created = await client.batches.createStreaming(head, async function* () {
        uploaded = false;
        yield* requests();
        uploaded = true;
      }, { signal });
    } catch (err) {
      if (signal.aborted && uploaded) io.note(`stopped after the upload was sent: the batch may exist. ${checkWith()}`);
      // Sent, but no readable answer: the service may have stored it, so it is not sent again.
      const unreadable = err instanceof ProtocolError;
      if (signal.aborted || !(unreadable || (err as { maybeDelivered?: boolean }).maybeDelivered)) {
        // Never delivered (or refused): nothing was made, nothing is to be looked for.
        if (!(signal.aborted && uploaded)) clearCreate(ctx.env, key);
        await client.close();
        throw err;
      }
      const what = `${unreadable ? 'the answer to the upload could not be read' : 'the upload failed after it was sent'} (${(err as Error).message})`;
      // The listing knows: the one batch of this create's shape listed as newer than the newest
      // before it is the one. The look is short (the network may be what failed): without an
      // answer, the batch may exist.
      const found = after === undefined ? undefined : await withinMs(signal, LOOKUP_MS, (look) => findCreated(client, { after, endpoint: scan.endpoint, model, count: scan.count }, look)).catch(() => undefined);
      if (found?.length !== 1) {
        await client.close();
        const which = found?.length ? `; ${counted(found.length, 'batch', 'batches')} ${found.length === 1 ? 'matches' : 'match'} it: ${found.map((b) => b.id).join(', ')}` : '; the batch may exist';
        throw new CliError(`${what}${which}. ${checkWith()}`, unreadable ? EXIT.SERVER : EXIT.NETWORK);
      }
      created = found[0]!;
      io.note(`${what}; found its batch in the listing: ${created.id}`);
    }
    if (record) recordCreate(ctx.env, key, { ...record, batch_id: created.id });
    const unindexed = (await import('../../../batch/local-index.js')).indexBatch(ctx.env, client.core.apiRoot, created, file === '-' ? 'stdin' : (await import('node:path')).resolve(file));
    if (unindexed) io.note(`warning: ${created.id} is not in this machine's batch index (${unindexed}): where the service lists no batches, batch list will not show it; keep its id`);
    const unheld = earlier ? await holdFoundBatch(ctx, connected, { path, endpoint: scan.endpoint, model }, created).catch((err: unknown) => `the budgets do not hold batch ${created.id}: ${(err as Error).message}`) : estimate?.hold?.toBatch(ctx.env, created.id);
    if (unheld) io.note(`warning: ${unheld}`);
    if (!opts.watch) {
      await client.close();
      io.made(`batch ${created.id} was created (router batch get ${created.id})`);
      if (opts.json) io.json(created);
      else io.out(`${created.id}\n`);
      clearCreate(ctx.env, key);
      unlock();
      io.info(`created ${created.id}: ${counted(scan.count, 'request')} to ${scan.endpoint} with ${model} (${created.status})`);
      return;
    }
    // The id goes out at once, whatever happens next: a watch that is killed never loses it. Its record stays
    // until the watch sees the batch end: the same command run again after a kill watches it, never sends again.
    // Written before the id is said: killed once it was said (its write blocked on a full pipe, or the process
    // descheduled there), the record said "never answered before its id was printed".
    if (record) recordCreate(ctx.env, key, { ...record, batch_id: created.id, watching: true });
    io.note(`created ${created.id}: ${counted(scan.count, 'request')} to ${scan.endpoint} with ${model}`);
    unlock();
    await watchAndFinish(ctx, client, created.id, created, target, () => clearCreate(ctx.env, key));
  } finally {
    unlockCreate?.();
    if (target && 'file' in target) target.file.abortSync();
    cleanup();
  }
}
