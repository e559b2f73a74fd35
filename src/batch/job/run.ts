/**
 * The job engine of `batch run`, for the CLI and for programs: plan (or take up) a job, submit its
 * shards each exactly once, follow it, merge its results in input order. It knows nothing of a
 * command line: it says what happens through `on`, stops on `signal`, and throws client errors or
 * BatchError. A job is kept on disk (store.ts) at every step, so any run can be taken up again.
 */
import { existsSync, statSync } from 'node:fs';
import { BATCH_MAX_BYTES, BATCH_MAX_REQUESTS } from '../../client/facts.js';
import type { RouterClient } from '../../client/index.js';
import { APIError, ConnectionError, ProtocolError } from '../../client/errors.js';
import { sleep } from '../../internal/sleep.js';
import { BatchError, invalid } from '../errors.js';
import { checkInputFile } from '../scan.js';
import { isTransient, MAX_INTERVAL_MS, offlineWait } from '../watch.js';
import { addRetryShards, writeMerged, type MergeCounts } from './merge.js';
import { checkDriveOptions, checkPlanOptions, checkResumeOptions } from '../options.js';
import { planJob } from './plan.js';
import { refuseDamagedOf } from './damaged.js';
import { progressLine, refreshJob, totals, type JobTotals } from './progress.js';
import { proveAdopted, submitShards, type SubmitContext } from './submit.js';
import { checkJobRoot, discardUnsent, dropUnsavedJob, holdJob, isFinished, listJobs, loadJob, madeAt, nextSeq, pickingJob, saveJob, type JobRecord } from './store.js';
import { indexedRoots } from '../local-index.js';
import { checkOptions, pickOptions } from '../../client/option-names.js';
import { DRIVE, OPEN, type DriveOptions, type OpenJobOptions, type RunJobOptions } from './job-options.js';

export type { DriveOptions, JobEvents, OpenJobOptions, RunJobOptions } from './job-options.js';

/** A job this process holds (no other run can submit its shards meanwhile); `made`: planned by this run. */
export interface HeldJob {
  job: JobRecord;
  release: () => void;
  made: boolean;
}

export interface JobOutcome {
  job: JobRecord;
  totals: JobTotals;
  /** Requests that failed: from the merge when there was one, else the batches' counts. */
  failed: number;
  merged?: MergeCounts | undefined;
}

/** The service stopped answering for longer than `offlineTimeout`. */
class OfflineError extends BatchError {}

/** Runs a job from start to end: `openJob`, then `driveJob` with this client (which stays open). */
export async function runJob(client: RouterClient, o: RunJobOptions): Promise<JobOutcome> {
  checkOptions('runJob()', o, [...new Set([...OPEN, ...DRIVE])]);
  checkDriveOptions(o);
  return driveJob(await openJob({ ...pickOptions(o, OPEN), apiRoot: o.apiRoot ?? client.core.apiRoot }), async () => client, pickOptions(o, DRIVE));
}

/**
 * The latest job made from this very file with the same settings, if there is one: the same
 * content (size and SHA-256), whatever name it is given by (a link, a copy, a relative path).
 */
function sameInput(jobs: readonly JobRecord[], job: JobRecord): JobRecord | undefined {
  return jobs.find(
    (j) => j.input.sha256 === job.input.sha256 && j.input.size === job.input.size && j.endpoint === job.endpoint && j.model === job.model && j.max_requests === job.max_requests && j.max_bytes === job.max_bytes && JSON.stringify(j.provider) === JSON.stringify(job.provider),
  );
}

/**
 * Holds job `id` and reads its record again: every decision to submit is made on the record as
 * it is once no other process can change it (a run that ended meanwhile has submitted its shards).
 */
async function holdAndRead(env: NodeJS.ProcessEnv, id: string): Promise<{ job: JobRecord; release: () => void }> {
  const release = await holdJob(env, id);
  try {
    return { job: loadJob(env, id), release };
  } catch (err) {
    release();
    throw err;
  }
}

/** Plans a job of the input (every line checked), with the options' limits; nothing is saved. */
export async function planInput(file: string, o: OpenJobOptions): Promise<JobRecord> {
  checkPlanOptions(o);
  checkInputFile(file, 'save the requests to a file and give its path (a job reads its file again)');
  const defaultModel = o.model ?? (await o.defaultModel?.());
  return planJob(file, { endpoint: o.endpoint, model: o.model, defaultModel, provider: o.provider, maxRequests: o.maxRequests ?? BATCH_MAX_REQUESTS, maxBytes: o.maxBytes ?? BATCH_MAX_BYTES });
}

/** Takes up job `resume`, or the input's job, or plans and saves a new one; holds it. */
export async function openJob(o: OpenJobOptions): Promise<HeldJob> {
  checkOptions('openJob()', o, OPEN);
  const env = o.env ?? process.env;
  if (o.resume) {
    const job = loadJob(env, o.resume);
    if (o.input) throw invalid(`resume ${o.resume} takes no input: the job remembers ${job.input.path}`, { about: 'resume_with_input', job: o.resume, input: job.input.path });
    checkResumeOptions(job, o);
    return { ...(await holdAndRead(env, job.id)), made: false };
  }
  if (!o.input) throw invalid('give an input file, or a job to resume');
  const job = await planInput(o.input, o);
  // Two runs of one file at once: the second finds the first's job, and that it is being run.
  return pickingJob(env, async () => {
    // A damaged record that may be this input's job stops the run (unless fresh): a new job could send its batches again.
    const damaged: string[] = [];
    const jobs = listJobs(env, o.fresh ? undefined : (id) => damaged.push(id));
    refuseDamagedOf(env, damaged, job.input.sha256);
    let roots: Map<string, string> | undefined;
    const atRoot = (j: JobRecord) => !o.apiRoot || madeAt(j, o.apiRoot, () => (roots ??= indexedRoots(env)));
    const earlier = o.fresh ? undefined : sameInput(jobs.filter(atRoot), job);
    if (earlier) {
      const held = await holdAndRead(env, earlier.id);
      o.on?.resumed?.(earlier);
      // The same content under another name: read from this one if the one planned is gone or changed.
      if (!inputUnchanged(held.job)) {
        held.job.input = job.input;
        saveJob(env, held.job);
      }
      return { ...held, made: false };
    }
    job.seq = nextSeq(jobs);
    try {
      saveJob(env, job);
    } catch (err) {
      dropUnsavedJob(env, job.id);
      throw err;
    }
    return { ...(await holdAndRead(env, job.id)), made: true };
  });
}

/**
 * Submits what the held job has not, follows it (with `watch` or `results`) and merges; releases
 * the job at the end. A failed run of a job it made and never sent a create for leaves no job.
 */
export async function driveJob(held: HeldJob, connect: () => Promise<RouterClient>, o: DriveOptions): Promise<JobOutcome> {
  const { job } = held;
  let release = held.release;
  const env = o.env ?? process.env;
  const signal = o.signal ?? new AbortController().signal;
  try {
    checkOptions('driveJob()', o, DRIVE);
    checkDriveOptions(o);
    return await runHeld(await connect(), job, { ...o, env, signal });
  } catch (err) {
    if (held.made && (await discardUnsent(env, job, release))) release = () => {};
    // Ctrl-C, the network gone (a timeout, a refused connection), or the service failing (a broken
    // answer, a 5xx or 429 after the retries): the job is taken up later.
    else if (signal.aborted || err instanceof ConnectionError || err instanceof OfflineError || err instanceof ProtocolError || (err instanceof APIError && (err.status >= 500 || err.status === 429))) o.on?.stopped?.(job, err);
    throw err;
  } finally {
    release();
  }
}

type Driving = DriveOptions & { env: NodeJS.ProcessEnv; signal: AbortSignal };

async function runHeld(client: RouterClient, job: JobRecord, o: Driving): Promise<JobOutcome> {
  const { env, signal, on } = o;
  checkInputUnchanged(job);
  checkJobRoot(env, job, client.core.apiRoot);
  await o.checkSpend?.(job);
  on?.started?.(job);
  const submitting: SubmitContext = { info: (text) => on?.info?.(text), env, signal, client, resubmitLost: o.resubmitLost };
  if (o.retryFailed) {
    await refreshJob(client, job, signal);
    await proveAdopted(submitting, job);
    const before = job.shards.length;
    const n = await addRetryShards(client, job, signal);
    // Retries are new spending: held to the caller's check before they are saved.
    try {
      if (n) await o.checkSpend?.(job);
    } catch (err) {
      job.shards.length = before;
      throw err;
    }
    saveJob(env, job);
    on?.retrying?.(job, n);
  }
  await submitShards(submitting, job, (shard) => on?.submitted?.(job, shard));
  if (o.watch || o.results) await follow(client, job, o);
  on?.settled?.(job);
  const t = totals(job);
  let merged: MergeCounts | undefined;
  if (o.results) {
    await proveAdopted(submitting, job);
    merged = await writeMerged(o.results.write, client, job, o.results.format ?? 'results', signal);
  }
  return { job, totals: t, failed: merged?.failed ?? t.failed, ...(merged ? { merged } : {}) };
}

/** Polls the job (one listing a poll) until every shard has ended, saving what changes. */
async function follow(client: RouterClient, job: JobRecord, o: Driving): Promise<void> {
  const { env, signal, on } = o;
  const started = Date.now();
  const before = totals(job);
  const firstDone = before.completed + before.failed;
  const base = (o.interval ?? 2) * 1000;
  let interval = base;
  let offlineSince: number | undefined;
  on?.progress?.(job, progressLine(job, started, firstDone), 'start', false);
  while (job.shards.some((s) => !isFinished(s))) {
    await sleep(interval, signal);
    let changed: boolean;
    try {
      changed = await refreshJob(client, job, signal);
    } catch (err) {
      if (signal.aborted || !o.offlineTimeout || !isTransient(err)) throw err;
      offlineSince ??= Date.now();
      const offline = (Date.now() - offlineSince) / 1000;
      if (offline > o.offlineTimeout) throw new OfflineError(`no answer from the service for ${Math.round(offline)}s (${(err as Error).message})`, 'network');
      interval = offlineWait(interval, offlineSince, o.offlineTimeout);
      const note = `${job.id}: ${(err as Error).message}; polling again in ${Math.round(interval / 1000)}s`;
      if (on?.offline) on.offline(note, interval);
      else on?.info?.(note);
      continue;
    }
    offlineSince = undefined;
    if (changed) saveJob(env, job);
    await proveAdopted({ info: (text) => on?.info?.(text), env, signal, client }, job);
    on?.progress?.(job, progressLine(job, started, firstDone), 'poll', changed);
    interval = changed ? base : Math.min(interval * 1.5, MAX_INTERVAL_MS);
  }
  on?.progress?.(job, progressLine(job, started, firstDone), 'end', false);
}

/** The shards are read back from the input at send and merge time: it must be the file planned. */
function checkInputUnchanged(job: JobRecord): void {
  const gone = !existsSync(job.input.path);
  if (!gone && inputUnchanged(job)) return;
  const batches = job.shards.flatMap((s) => (s.batch_id ? [s.batch_id] : []));
  const data = { about: 'input_changed' as const, job: job.id, input: job.input.path, gone, batches };
  const results = batches.length ? `, or fetch each batch's results as they are (${batches.join(', ')})` : '';
  throw invalid(`the input of ${job.id}, ${job.input.path}, ${gone ? 'is gone' : 'changed since the job was planned'}: put it back as it was${results}`, data);
}

function inputUnchanged(job: JobRecord): boolean {
  try {
    const st = statSync(job.input.path);
    return st.size === job.input.size && st.mtimeMs === job.input.mtime_ms;
  } catch {
    return false;
  }
}
