import type { RouterClient } from '../../../client/index.js';
import { APIError, ConnectionError } from '../../../client/errors.js';
import { isTerminalBatchStatus } from '../../../client/facts.js';
import type { Batch } from '../../../client/types.js';
import { sleep } from '../../../internal/sleep.js';
import { CliError, EXIT } from '../../exit-codes.js';
import type { RunContext } from '../../run.js';
import { batchError, logBatch, openResults, writeResults, type ResultsTarget } from './results.js';
import { describeBatch, tsvLine } from './format.js';

export interface WatchOpts {
  interval: number;
  /** Seconds to keep polling through network errors, 429 and 5xx before giving up. */
  offlineTimeout: number;
  results?: string | true;
  json?: boolean;
}

const MAX_INTERVAL_MS = 15_000;

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

/** 429, 5xx and connection failures pass; the watch keeps polling through them. */
function isTransient(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  return err instanceof APIError && (err.status === 429 || err.status >= 500);
}

/** Polls until the batch ends; Ctrl-C stops polling (the batch keeps running) and prints how to resume. */
export async function watch(ctx: RunContext<WatchOpts>, client: RouterClient, id: string, first?: Batch): Promise<Batch> {
  const { io, opts, signal } = ctx;
  const started = Date.now();
  const spinner = io.stderrTTY && !io.quiet
    // discardStdin off: ora would put the terminal in raw mode, and Ctrl-C would never become SIGINT.
    ? (await import('ora')).default({ stream: io.stderr, isEnabled: true, discardStdin: false }).start(`${id}: starting`)
    : undefined;
  let interval = opts.interval * 1000;
  let last = first;
  let lastStatus = first?.status;
  let offlineSince: number | undefined;
  const label = (b: Batch) => {
    const c = b.request_counts;
    return `${id} ${b.status}: ${c.completed} completed, ${c.failed} failed of ${c.total} (${Math.round((Date.now() - started) / 1000)}s)`;
  };
  try {
    for (;;) {
      let b: Batch;
      try {
        b = first ?? (await client.batches.get(id, { signal }));
      } catch (err) {
        if (signal.aborted || !isTransient(err)) throw batchError(err, id);
        offlineSince ??= Date.now();
        const offline = (Date.now() - offlineSince) / 1000;
        if (offline > opts.offlineTimeout) {
          throw new CliError(`no answer from the service for ${Math.round(offline)}s (${(err as Error).message}); ${id} may still be running. Resume with: ${resumeCommand(ctx, id)}`, EXIT.NETWORK);
        }
        interval = Math.min(interval * 2, MAX_INTERVAL_MS);
        const note = `${id}: ${(err as Error).message}; polling again in ${Math.round(interval / 1000)}s`;
        if (spinner) spinner.text = note;
        else io.info(note);
        await sleep(interval, signal);
        continue;
      }
      offlineSince = undefined;
      if (b.status !== lastStatus) {
        if (spinner) spinner.info(`${id}: ${lastStatus ?? 'found'} -> ${b.status}`).start();
        else if (io.verbose) io.note(`${id}: ${b.status}`);
        lastStatus = b.status;
      }
      if (spinner) spinner.text = label(b);
      if (isTerminalBatchStatus(b.status)) {
        if (spinner && b.status === 'completed') spinner.succeed(label(b));
        else if (spinner) spinner.fail(label(b));
        return b;
      }
      const progressed = last && (last.request_counts.completed !== b.request_counts.completed || last.request_counts.failed !== b.request_counts.failed);
      last = b;
      first = undefined;
      await sleep(interval, signal);
      interval = progressed ? opts.interval * 1000 : Math.min(interval * 1.5, MAX_INTERVAL_MS);
    }
  } catch (err) {
    spinner?.stop();
    if (signal.aborted) io.note(`stopped watching; ${id} keeps running. Resume with: ${resumeCommand(ctx, id)}`);
    throw err;
  }
}

/** Watches, then writes the results or the final state; a batch that did not complete exits 9. */
export async function watchAndFinish(ctx: RunContext<WatchOpts>, client: RouterClient, id: string, first?: Batch, target?: ResultsTarget): Promise<void> {
  const { io, opts, signal } = ctx;
  try {
    const done = await watch(ctx, client, id, first);
    let final = done;
    if (opts.results !== undefined) final = await writeResults(io, client, id, target ?? (await openResults(opts.results)), signal);
    logBatch(ctx, final);
    if (opts.results === undefined) {
      if (opts.json) io.json(await client.batches.get(id, { signal }).catch((e) => Promise.reject(batchError(e, id))));
      else if (io.stdoutTTY) io.out(describeBatch(final));
      else io.out(tsvLine(final));
    }
    if (final.status !== 'completed') {
      throw new CliError(`${id} ${final.status}${final.error ? `: ${final.error.message}` : ''}`, EXIT.BATCH_FAILED);
    }
  } finally {
    if (target && 'file' in target) target.file.abortSync();
    await client.close();
  }
}
