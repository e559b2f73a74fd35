/** `router batch run`: plan (or resume) a job, submit its shards, follow it, merge its results. */
import { existsSync, statSync } from 'node:fs';
import { BATCH_MAX_BYTES, BATCH_MAX_REQUESTS } from '../../../../client/facts.js';
import type { RouterClient } from '../../../../client/index.js';
import type { Batch } from '../../../../client/types.js';
import { ConnectionError } from '../../../../client/errors.js';
import { sleep } from '../../../../internal/sleep.js';
import { CliError, EXIT, usage } from '../../../exit-codes.js';
import type { RunContext } from '../../../run.js';
import { logBatch, openResults, refuseResultsOverInput, type ResultsTarget } from '../results.js';
import { takeUpCommand } from '../watch.js';
import { checkInputFile } from '../create.js';
import { addRetryShards, writeMerged, type MergeFormat } from './merge.js';
import { planJob } from './plan.js';
import { progressLine, refreshJob, totals } from './progress.js';
import { proveAdopted, submitShards } from './submit.js';
import { discardUnsent, dropUnsavedJob, holdJob, isFinished, listJobs, loadJob, pickingJob, saveJob, type JobRecord } from './store.js';
import { describeJob, jobSummary } from './show.js';

export interface RunJobOpts {
  endpoint?: string;
  model?: string;
  providerOnly?: string[];
  fallbacks?: boolean;
  maxRequests?: number;
  maxBytes?: number;
  resume?: string;
  retryFailed?: boolean;
  dryRun?: boolean;
  new?: boolean;
  watch?: boolean;
  results?: string | true;
  lineNumbers?: boolean;
  join?: boolean;
  interval: number;
  json?: boolean;
  maxCost?: number;
  ignoreBudget?: boolean;
}

function checkFlags(opts: RunJobOpts, file: string | undefined): void {
  if (!file && !opts.resume) throw usage('give a JSONL file, or --resume JOB');
  if (opts.retryFailed && !opts.resume) throw usage('--retry-failed goes with --resume JOB');
  if (opts.dryRun && opts.resume) throw usage('--dry-run plans a new job; it does not go with --resume');
  if (opts.new && opts.resume) throw usage('--new starts another job; it does not go with --resume');
  if ((opts.join || opts.lineNumbers) && opts.results === undefined) throw usage(`--${opts.join ? 'join' : 'line-numbers'} goes with --results`);
  if (opts.join && opts.lineNumbers) throw usage('--join already carries the line number; give one of --join and --line-numbers');
  if (opts.json && (opts.results === true || opts.results === '-')) throw usage('--json and --results to stdout cannot be combined (give --results a file)');
}

/**
 * The latest job made from this very file with the same settings, if there is one: the same
 * content (size and SHA-256), whatever name it is given by (a link, a copy, a relative path).
 */
function sameInput(ctx: RunContext<RunJobOpts>, job: JobRecord): JobRecord | undefined {
  return listJobs(ctx.env).find(
    (j) => j.input.sha256 === job.input.sha256 && j.input.size === job.input.size && j.endpoint === job.endpoint && j.model === job.model && j.max_requests === job.max_requests && j.max_bytes === job.max_bytes && JSON.stringify(j.provider) === JSON.stringify(job.provider),
  );
}

/**
 * Holds job `id` and reads its record again: every decision to submit is made on the record as
 * it is once no other process can change it (a run that ended meanwhile has submitted its shards).
 */
function holdAndRead(ctx: RunContext<RunJobOpts>, id: string): { job: JobRecord; release: () => void } {
  const release = holdJob(ctx.env, id);
  try {
    return { job: loadJob(ctx.env, id), release };
  } catch (err) {
    release();
    throw err;
  }
}

async function newJob(ctx: RunContext<RunJobOpts>, file: string): Promise<{ job: JobRecord; release: () => void; made?: boolean } | undefined> {
  const { opts } = ctx;
  if (file === '-') throw usage('batch run reads its file again to resume and merge: save stdin to a file and give its path');
  checkInputFile(file);
  refuseResultsOverInput(opts.results, file);
  const provider: JobRecord['provider'] = {};
  if (opts.providerOnly) provider.only = opts.providerOnly;
  if (opts.fallbacks === false) provider.allow_fallbacks = false;
  const defaultModel = opts.model ?? (await ctx.settings()).model;
  const job = await planJob(file, { endpoint: opts.endpoint, model: opts.model, defaultModel, provider: Object.keys(provider).length ? provider : undefined, maxRequests: opts.maxRequests ?? BATCH_MAX_REQUESTS, maxBytes: opts.maxBytes ?? BATCH_MAX_BYTES });
  if (opts.dryRun) {
    const { checkJobSpend, estimateLine } = await import('../../../batch-estimate.js');
    // The plan needs no key: without one (or without the model list) the bound is said to be unknown.
    const connected = await ctx.connect().catch((err: Error) => void ctx.io.note(`cost bound: unknown (${err.message})`));
    const estimate = connected && (await checkJobSpend(ctx, connected, job).finally(() => connected.client.close()));
    if (opts.json) ctx.io.json({ ...jobSummary(job), ...(estimate ? { cost_bound: estimate } : {}) });
    else ctx.io.out(`${await describeJob(job, ctx.io)}${estimate ? `${estimateLine(estimate)}\n` : ''}`);
    return undefined;
  }
  // Two runs of one file at once: the second finds the first's job, and that it is being run.
  return pickingJob(ctx.env, () => {
    const earlier = opts.new ? undefined : sameInput(ctx, job);
    if (earlier) {
      const held = holdAndRead(ctx, earlier.id);
      ctx.io.note(`resuming ${earlier.id}, made from this file (--new starts another job)`);
      // The same content under another name: read from this one if the one planned is gone or changed.
      if (!inputUnchanged(held.job)) {
        held.job.input = job.input;
        saveJob(ctx.env, held.job);
      }
      return held;
    }
    try {
      saveJob(ctx.env, job);
    } catch (err) {
      dropUnsavedJob(ctx.env, job.id);
      throw err;
    }
    return { ...holdAndRead(ctx, job.id), made: true };
  });
}

async function follow(ctx: RunContext<RunJobOpts>, client: RouterClient, job: JobRecord): Promise<void> {
  const { io, signal, opts } = ctx;
  const started = Date.now();
  const before = totals(job);
  const firstDone = before.completed + before.failed;
  const spinner = io.stderrTTY && !io.quiet ? (await import('ora')).default({ stream: io.stderr, isEnabled: true, discardStdin: false }).start(progressLine(job, started, firstDone)) : undefined;
  let interval = opts.interval * 1000;
  try {
    while (job.shards.some((s) => !isFinished(s))) {
      await sleep(interval, signal);
      const changed = await refreshJob(client, job, signal);
      if (changed) saveJob(ctx.env, job);
      await proveAdopted({ io, env: ctx.env, signal, client }, job);
      const line = progressLine(job, started, firstDone);
      if (spinner) spinner.text = line;
      else if (changed) io.info(line);
      interval = changed ? opts.interval * 1000 : Math.min(interval * 1.5, 15_000);
    }
  } finally {
    spinner?.stop();
  }
  io.info(progressLine(job, started, firstDone));
}

/** The command that takes the job up again with the same output flags. */
function resumeCommand(ctx: RunContext<RunJobOpts>, job: JobRecord): string {
  const { opts } = ctx;
  const words = ['batch', 'run', '--resume', job.id, '--watch'];
  if (opts.interval !== 2) words.push('--interval', String(opts.interval));
  return takeUpCommand(ctx.flags, words, opts.results, [...(opts.lineNumbers ? ['--line-numbers'] : []), ...(opts.join ? ['--join'] : [])]);
}

export async function runJob(ctx: RunContext<RunJobOpts>, file: string | undefined): Promise<void> {
  const { opts } = ctx;
  checkFlags(opts, file);
  let job: JobRecord;
  let release: () => void;
  let made = false;
  if (opts.resume) {
    job = loadJob(ctx.env, opts.resume);
    if (file) throw usage(`--resume ${opts.resume} takes no file: the job remembers ${job.input.path}`);
    ({ job, release } = holdAndRead(ctx, job.id));
  } else {
    const picked = await newJob(ctx, file!);
    if (!picked) return;
    ({ job, release, made = false } = picked);
  }
  try {
    await runHeld(ctx, job);
  } catch (err) {
    if (made && discardUnsent(ctx.env, job, release)) release = () => {};
    // Ctrl-C, or the network gone (a timeout, a refused connection): the job is taken up later.
    else if (ctx.signal.aborted || err instanceof ConnectionError) ctx.io.note(`stopped; ${job.id} is saved and its batches keep running. Resume with: ${resumeCommand(ctx, job)}`);
    throw err;
  } finally {
    release();
  }
}

async function runHeld(ctx: RunContext<RunJobOpts>, job: JobRecord): Promise<void> {
  const { io, opts, signal } = ctx;
  let target: ResultsTarget | undefined;
  if (opts.results !== undefined) target = await openResults(opts.results, job.input.path);
  const connected = await ctx.connect();
  const { client } = connected;
  try {
    checkInputUnchanged(job);
    const spend = await import('../../../batch-estimate.js');
    await spend.checkJobSpend(ctx, connected, job);
    const waits = opts.watch || opts.results !== undefined;
    // The id goes out first, whatever happens next: a run that is killed never loses it.
    if (waits || opts.json) io.note(`job ${job.id}: ${job.requests} requests in ${job.shards.filter((s) => s.parent === undefined).length} shard(s)`);
    else {
      io.made(`job ${job.id} was started (router batch job ${job.id}; router batch run --resume ${job.id} --watch)`);
      io.out(`${job.id}\n`);
    }
    const submitting = { io, env: ctx.env, signal, client };
    if (opts.retryFailed) {
      await refreshJob(client, job, signal);
      await proveAdopted(submitting, job);
      const before = job.shards.length;
      const n = await addRetryShards(client, job, signal);
      // Retries are new spending: held to --max-cost and the budgets before they are saved.
      try {
        if (n) await spend.checkJobSpend(ctx, connected, job);
      } catch (err) {
        job.shards.length = before;
        throw err;
      }
      saveJob(ctx.env, job);
      io.note(n ? `retrying ${n} request(s) of ${job.id}` : `nothing of ${job.id} failed: no retry`);
    }
    const submitted = job;
    await submitShards(submitting, job, (shard) => io.info(`${submitted.id}: shard ${shard.index + 1} of ${submitted.shards.length} is ${shard.batch_id}`));
    if (waits) await follow(ctx, client, job);
    for (const s of job.shards) if (s.batch_id && s.status) logBatch(ctx, { id: s.batch_id, model: job.model, status: s.status as Batch['status'], usage: s.usage ?? null });
    const t = totals(job);
    let failed = t.failed;
    if (target) {
      await proveAdopted(submitting, job);
      const format: MergeFormat = opts.join ? 'joined' : opts.lineNumbers ? 'numbered' : 'results';
      const counts = await writeMerged(io, client, job, target, format, signal);
      io.info(`${counts.lines} results in input order`);
      failed = counts.failed;
    }
    // Said whether stderr is a terminal or not: with every batch completed, the exit code is 0.
    if (waits && failed > 0) io.note(`${job.id}: ${failed} of ${job.requests} requests failed (retry them: router batch run --resume ${job.id} --retry-failed --watch --results …)`);
    if (opts.json) io.json(jobSummary(job));
    if (waits && t.unsuccessful > 0) throw new CliError(`${t.unsuccessful} shard(s) of ${job.id} did not complete (see: router batch job ${job.id})`, EXIT.BATCH_FAILED);
  } finally {
    if (target && 'file' in target) target.file.abortSync();
    await client.close();
  }
}

/** The shards are read back from the input at send and merge time: it must be the file planned. */
function checkInputUnchanged(job: JobRecord): void {
  if (!existsSync(job.input.path)) throw new CliError(`the input of ${job.id}, ${job.input.path}, is gone`, EXIT.USAGE);
  if (!inputUnchanged(job)) throw new CliError(`the input of ${job.id}, ${job.input.path}, changed since the job was planned`, EXIT.USAGE);
}

function inputUnchanged(job: JobRecord): boolean {
  try {
    const st = statSync(job.input.path);
    return st.size === job.input.size && st.mtimeMs === job.input.mtime_ms;
  } catch {
    return false;
  }
}
