/** `batch create --watch` and `batch get --watch`: the watch on a terminal (a spinner), its results, and how to take it up again. */
import type { RouterClient } from '../../../client/index.js';
import type { Batch } from '../../../client/types.js';
import { BatchError } from '../../../batch/errors.js';
import { batchError } from '../../../batch/results.js';
import { watchBatch } from '../../../batch/watch.js';
import type { FlagValues } from '../../flags/flags.js';
import type { RunContext } from '../../run.js';
import type { CreateOpts, WATCH_FLAGS } from './flags.js';
import { batchEndFailure, logBatch, logOwed, openResults, sayFailed, writeResults, type ResultsTarget } from './results.js';
import { describeBatch, tsvLine } from './format.js';
import { drawsSpinner, spinnerMaker } from '../../io/spinner.js';
import { grouped } from '../../../internal/counted.js';
import { linkSeen } from '../../spend/sent-seen.js';

/** What a watch reads of the command's options (batch create --watch, batch get --watch). */
export type WatchOpts = FlagValues<typeof WATCH_FLAGS> & Pick<CreateOpts, 'results' | 'json'>;

/** Piped, a watch prints a progress line at least this often. */
const PIPED_EVERY_MS = 20_000;

const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * A command to take a follow up again, as one shell line: the global flags that pick the service,
 * then `words`, then `--results` as given.
 */
export function takeUpCommand(flags: RunContext<unknown>['flags'], words: string[], results: string | true | undefined, extra: string[] = []): string {
  const parts = ['router'];
  if (flags.profile) parts.push('--profile', flags.profile);
  if (flags.apiRoot) parts.push('--api-root', flags.apiRoot);
  parts.push(...words);
  if (results === true) parts.push('--results');
  else if (results !== undefined) parts.push('--results', results);
  return [...parts, ...extra].map(shellQuote).join(' ');
}

/** The exact command that takes the watch up again, with every flag that matters. */
export function resumeCommand(ctx: RunContext<WatchOpts>, id: string): string {
  const { opts } = ctx;
  const words = ['batch', 'get', id, '--watch'];
  if (opts.interval !== 1) words.push('--interval', String(opts.interval));
  if (opts.offlineTimeout !== 900) words.push('--offline-timeout', String(opts.offlineTimeout));
  return takeUpCommand(ctx.flags, words, opts.results, opts.json ? ['--json'] : []);
}

/** Polls until the batch ends; Ctrl-C stops polling (the batch keeps running) and prints how to resume. */
export async function watch(ctx: RunContext<WatchOpts>, client: RouterClient, id: string, first?: Batch): Promise<Batch> {
  const { io, opts, signal } = ctx;
  const started = Date.now();
  let lastLine = started;
  const spinner = drawsSpinner(io) ? (await spinnerMaker(io))(`${id}: starting`) : undefined;
  const label = (b: Batch) => {
    const c = b.request_counts;
    return `${id} ${b.status}: ${grouped(c.completed)} completed, ${grouped(c.failed)} failed of ${grouped(c.total)} (${Math.round((Date.now() - started) / 1000)}s)`;
  };
  try {
    const done = await watchBatch(client, id, {
      interval: opts.interval,
      offlineTimeout: opts.offlineTimeout,
      first,
      signal,
      on: {
        // Piped too: a follow that rides out an outage (up to --offline-timeout) is never silent about it.
        offline: (note) => (spinner ? (spinner.text = note) : !io.quiet && io.note(note)),
        status: (b, from) => {
          if (!from) linkSeen(ctx.env, client.core.apiRoot, [b]);
          if (spinner) spinner.info(from ? `${id}: ${from} -> ${b.status}` : `${id}: ${b.status}`).start();
          else if (!io.quiet) {
            lastLine = Date.now();
            io.note(label(b));
          }
        },
        polled: (b) => {
          if (spinner) spinner.text = label(b);
          // Piped: besides each change of status, a line at least every 20 s (never silent for minutes).
          else if (!io.quiet && Date.now() - lastLine >= PIPED_EVERY_MS) {
            lastLine = Date.now();
            io.note(label(b));
          }
        },
      },
    });
    if (spinner && done.status === 'completed') spinner.succeed(label(done));
    else if (spinner) spinner.fail(label(done));
    return done;
  } catch (err) {
    spinner?.stop();
    if (signal.aborted) io.note(`stopped watching; ${id} keeps running. Resume with: ${resumeCommand(ctx, id)}`);
    if (err instanceof BatchError && err.reason === 'network') throw new BatchError(`${err.message}. Resume with: ${resumeCommand(ctx, id)}`, 'network');
    throw err;
  }
}

/** Watches, then writes the results or the final state; a batch that did not complete, or whose every request failed, exits 9. */
export async function watchAndFinish(ctx: RunContext<WatchOpts>, client: RouterClient, id: string, first?: Batch, target?: ResultsTarget, ended?: () => void): Promise<void> {
  const { io, opts, signal } = ctx;
  try {
    const done = await watch(ctx, client, id, first);
    let final = done;
    if (opts.results !== undefined) final = await writeResults(io, client, id, target ?? (await openResults(opts.results)), signal);
    linkSeen(ctx.env, client.core.apiRoot, [final]);
    logBatch(ctx, final);
    ended?.(); // seen to its end, its results (when asked) written
    if (opts.results === undefined) {
      if (opts.json) io.json(await client.batches.get(id, { signal }).catch((e) => Promise.reject(batchError(e, id))));
      else if (io.stdoutTTY) io.out(describeBatch(io, final));
      else io.out(tsvLine(final));
      if (final.status === 'completed') sayFailed(io, id, final, ` (router batch get ${id} --results)`);
    }
    const failure = batchEndFailure({ ...final, id });
    if (failure) throw failure;
  } catch (err) {
    logOwed(ctx, client.core.apiRoot, err);
    // Ctrl-C said the id and the command that takes it up: that create was answered, its record goes.
    if (signal.aborted) ended?.();
    throw err;
  } finally {
    if (target && 'file' in target) target.file.abortSync();
    await client.close();
  }
}
