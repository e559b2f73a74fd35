/** `router batch run`: the job engine (src/batch) driven from the command line: its flags, its output, its exit codes. */
import type { Batch } from '../../../client/types.js';
import type { RouterClient } from '../../../client/index.js';
import { checkInputFile } from '../../../batch/scan.js';
import { driveJob, openJob, planInput, type JobEvents } from '../../../batch/job/run.js';
import { jobSummary } from '../../../batch/job/progress.js';
import { loadJob, type JobRecord } from '../../../batch/job/store.js';
import { BatchError } from '../../../batch/errors.js';
import type { MergeFormat } from '../../../batch/job/merge.js';
import type { Connected } from '../../context.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import type { RunContext } from '../../run.js';
import type { RunOpts } from './flags.js';
import { describeJob } from './jobs.js';
import { CutAnswers, logBatch, logOwed, openResults, refuseResultsOverInput, sinkOf, type ResultsTarget } from './results.js';
import { takeUpCommand } from './watch.js';
import { drawsSpinner, spinnerMaker, waitingSpinner } from '../../io/spinner.js';
import { counted, grouped } from '../../../internal/counted.js';

type Ctx = RunContext<RunOpts>;

/** Piped, a follow prints a progress line at least this often. */
const PIPED_EVERY_MS = 20_000;

/** From this size on, reading and checking every line of the input takes long enough (~1 s a 50 MB) to be shown as it goes. */
const CHECKING_SHOWN_FROM = 8 * 1024 * 1024;

/**
 * A spinner on a terminal while the input is read and checked line by line (then, under --dry-run, its cost bound
 * taken): a file of millions of lines takes a minute with nothing else on the screen. Stopped by the next line said.
 */
async function checkingSpinner(ctx: Ctx, file: string): Promise<() => void> {
  const { statSync } = await import('node:fs');
  const size = statSync(file).size;
  if (size < CHECKING_SHOWN_FROM) return () => {};
  return waitingSpinner(ctx.io, `checking every line of ${file} (${(size / 1e6).toFixed(1)} MB)`);
}

function checkFlags(opts: RunOpts, file: string | undefined, jsonFlag: string): void {
  if (!file && !opts.resume) throw usage('give a JSONL file, or --resume JOB');
  if (opts.dryRun && opts.resume) throw usage('--dry-run plans a new job; it does not go with --resume');
  const following = opts.watch ? '--watch' : opts.results !== undefined ? '--results' : undefined;
  if (opts.dryRun && following) throw usage(`--dry-run sends nothing: it does not go with ${following}`);
  if (opts.new && opts.resume) throw usage('--new starts another job; it does not go with --resume');
  if (opts.join && opts.lineNumbers) throw usage('--join already carries the line number; give one of --join and --line-numbers');
  if (opts.json && (opts.results === true || opts.results === '-')) throw usage(`${jsonFlag} and --results to stdout cannot be combined (give --results a file)`);
}

/**
 * A job --resume names that is not there is a usage error (2), as a --role or --profile that is not
 * there is (docs/reliability.md); asked about by argument (`batch job ID`) it is not found (5).
 */
function refuseUnknownJob(ctx: Ctx, id: string): void {
  try {
    loadJob(ctx.env, id);
  } catch (err) {
    if (err instanceof BatchError && err.data?.about === 'no_job') throw usage(`--resume: no job ${id} (router batch jobs lists them)`);
    // Anything else (not a job id, a damaged record) is said as the engine says it.
  }
}

/** The command that takes the job up again with the same output flags. */
function resumeCommand(ctx: Ctx, job: JobRecord): string {
  const { opts } = ctx;
  const words = ['batch', 'run', '--resume', job.id, '--watch'];
  if (opts.interval !== 2) words.push('--interval', String(opts.interval));
  if (opts.offlineTimeout !== undefined) words.push('--offline-timeout', String(opts.offlineTimeout));
  return takeUpCommand(ctx.flags, words, opts.results, [...(opts.lineNumbers ? ['--line-numbers'] : []), ...(opts.join ? ['--join'] : [])]);
}

function planOptions(ctx: Ctx, file: string | undefined) {
  const { opts } = ctx;
  const provider: JobRecord['provider'] = {};
  if (opts.providerOnly) provider.only = opts.providerOnly;
  if (opts.fallbacks === false) provider.allow_fallbacks = false;
  return {
    input: file,
    resume: opts.resume,
    endpoint: opts.endpoint,
    model: opts.model,
    defaultModel: async () => (await ctx.settings()).model,
    provider: Object.keys(provider).length ? provider : undefined,
    maxRequests: opts.maxRequests,
    maxBytes: opts.maxBytes,
    fresh: opts.new,
    env: ctx.env,
  };
}

/** --dry-run: the plan and the cost bound of the file; nothing is saved or sent. */
async function dryRun(ctx: Ctx, file: string): Promise<void> {
  const checked = await checkingSpinner(ctx, file);
  const job = await planInput(file, planOptions(ctx, file)).finally(checked);
  const { checkJobSpend, estimateJson, estimateLine } = await import('../../spend/batch-estimate.js');
  // The plan needs no key: without one (or without the model list) the bound is said to be unknown.
  const connected = await ctx.connect().catch((err: Error) => void ctx.io.note(`cost bound: unknown (${err.message})`));
  const bounded = connected ? await checkingSpinner(ctx, file) : () => {};
  const estimate = connected && (await checkJobSpend(ctx, connected, job).finally(() => (bounded(), connected.client.close())));
  if (ctx.opts.json) ctx.io.json({ ...jobSummary(job), ...(estimate ? { cost_bound: estimateJson(estimate) } : {}) });
  else ctx.io.out(await describeJob(job, ctx.io));
  // Not data: the rows alone on stdout, as chat --dry-run's body is.
  if (estimate && !ctx.opts.json) ctx.io.note(estimateLine(estimate));
  ctx.io.note(`dry run: ${counted(job.requests, 'request')} in ${counted(job.shards.length, 'shard')} checked; nothing was saved or sent`);
}

export async function runJobCommand(ctx: Ctx, file: string | undefined): Promise<void> {
  const { io, opts, signal } = ctx;
  checkFlags(opts, file, io.jsonFlag);
  if (opts.resume) refuseUnknownJob(ctx, opts.resume);
  if (file !== undefined && !opts.resume) {
    if (file === '-') throw usage('batch run reads its file again to resume and merge: save stdin to a file and give its path');
    checkInputFile(file, 'save the requests to a file and give its path (batch run reads its file again)');
    refuseResultsOverInput(opts.results, file);
    if (opts.dryRun) return dryRun(ctx, file);
  }
  const waits = opts.watch || opts.results !== undefined;
  const ora = waits && drawsSpinner(io) ? await spinnerMaker(io) : undefined;
  let spinner: ReturnType<NonNullable<typeof ora>> | undefined;
  let lastLine = Date.now();
  const spend = await import('../../spend/batch-estimate.js');
  /** The last check's estimate: under a budget, its hold, which each shard submitted takes its part of. */
  let estimate: Awaited<ReturnType<typeof spend.checkJobSpend>>;
  const on: JobEvents = {
    info: (text) => (spinner ? (spinner.text = text) : io.info(text)),
    // A failed poll that is tried again (--offline-timeout) is said piped too; other news only on a terminal.
    offline: (note) => (spinner ? (spinner.text = note) : !io.quiet && io.note(note)),
    resumed: (job) => io.note(`resuming ${job.id}, made from this file (--new starts another job)`),
    started: (job) => {
      // The id goes out first, whatever happens next: a run that is killed never loses it.
      if (waits || opts.json) io.note(`job ${job.id}: ${counted(job.requests, 'request')} in ${counted(job.shards.filter((s) => s.parent === undefined).length, 'shard')}`);
      else {
        io.made(`job ${job.id} was started (router batch job ${job.id}; router batch run --resume ${job.id} --watch)`);
        io.out(`${job.id}\n`);
      }
    },
    retrying: (job, n) => io.note(n ? `retrying ${counted(n, 'request')} of ${job.id}` : `nothing of ${job.id} failed: no retry`),
    submitted: (job, shard) => {
      io.info(`${job.id}: shard ${shard.index + 1} of ${job.shards.length} is ${shard.batch_id}`);
      const unheld = spend.holdShard(estimate, ctx.env, shard);
      if (unheld) io.note(`warning: ${unheld}`);
    },
    progress: (_job, line, phase, changed) => {
      if (phase === 'start') spinner = ora?.(line);
      else if (phase === 'poll' && spinner) spinner.text = line;
      // Piped: a line on each change, and at least every 20 s, so a long run is never silent.
      else if (phase === 'poll' && (changed || Date.now() - lastLine >= PIPED_EVERY_MS)) {
        lastLine = Date.now();
        if (!io.quiet) io.note(line);
      }
      else if (phase === 'end') {
        spinner?.stop();
        spinner = undefined;
        io.info(line);
      }
    },
    settled: (job) => {
      for (const s of job.shards) if (s.batch_id && s.status) logBatch(ctx, { id: s.batch_id, model: job.model, status: s.status as Batch['status'], usage: s.usage ?? null, request_counts: s.request_counts });
    },
    stopped: (job) => {
      spinner?.stop();
      io.note(`stopped; ${job.id} is saved and its batches keep running. Resume with: ${resumeCommand(ctx, job)}`);
    },
  };
  // The file's job is one made at this API root: a job of the emulator is not taken up against the service.
  const [{ checkedApiRoot }, { DEFAULT_API_ROOT }] = await Promise.all([import('../../../client/request-checks.js'), import('../../../client/core.js')]);
  const apiRoot = checkedApiRoot((await ctx.settings()).apiRoot ?? DEFAULT_API_ROOT, DEFAULT_API_ROOT);
  const checked = file === undefined ? () => {} : await checkingSpinner(ctx, file);
  const held = await openJob({ ...planOptions(ctx, file), apiRoot, on }).finally(checked);
  let target: ResultsTarget | undefined;
  let connected: Connected | undefined;
  // Results go to a file checked before anything is sent; the client is made once the job is held.
  const connect = async (): Promise<RouterClient> => {
    if (opts.results !== undefined) target = await openResults(opts.results, held.job.input.path);
    connected = await ctx.connect();
    return connected.client;
  };
  const format: MergeFormat = opts.join ? 'joined' : opts.lineNumbers ? 'numbered' : 'results';
  const cut = new CutAnswers();
  try {
    const outcome = await driveJob(held, connect, {
      retryFailed: opts.retryFailed,
      resubmitLost: opts.resubmitLost,
      watch: opts.watch,
      results: opts.results !== undefined ? { write: (chunk) => (cut.see(chunk), sinkOf(io, target!)(chunk)), format } : undefined,
      interval: opts.interval,
      offlineTimeout: opts.offlineTimeout,
      checkSpend: async (job) => {
        const bounding = await checkingSpinner(ctx, job.input.path);
        estimate = await spend.checkJobSpend(ctx, connected!, job).finally(bounding);
      },
      env: ctx.env,
      signal,
      on,
    }).catch((err: unknown) => {
      // A shard's Get (or its results) answered 402: what it owes is recorded, as batch get records it.
      logOwed(ctx, apiRoot, err);
      throw err;
    });
    const { job, totals: t, failed, merged } = outcome;
    if (merged) {
      if (target && 'file' in target) await target.file.commit();
      io.info(`${counted(merged.lines, 'result')} in input order`);
    }
    const retry = `router batch run --resume ${job.id} --retry-failed --watch --results …`;
    // Every request failed: nothing to keep, a failure to a script as a failed batch is (exit 9, as batch create --watch).
    const allFailed = waits && t.unsuccessful === 0 && job.requests > 0 && failed >= job.requests;
    // Said whether stderr is a terminal or not: with every batch completed and some answered, the exit code is 0.
    if (waits && failed > 0 && !allFailed) io.note(`${job.id}: ${grouped(failed)} of ${counted(job.requests, 'request')} failed (retry them: ${retry})`);
    if (merged) cut.say(io, job.id, job.requests);
    if (opts.json) io.json(jobSummary(job));
    if (waits && t.unsuccessful > 0) throw new CliError(`${counted(t.unsuccessful, 'shard')} of ${job.id} did not complete (see: router batch job ${job.id})`, EXIT.BATCH_FAILED);
    if (allFailed) throw new CliError(`${job.id}: all ${counted(job.requests, 'request')} failed (see their "error" in the results; retry them: ${retry})`, EXIT.BATCH_FAILED);
  } finally {
    spinner?.stop();
    if (target && 'file' in target) target.file.abortSync();
    await connected?.client.close();
  }
}
