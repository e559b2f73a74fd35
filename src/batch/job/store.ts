/**
 * Job records of `router batch run`: one folder per job under the state folder, holding job.json.
 * Every change is written whole to a temp file, flushed to disk and renamed over the old one, so
 * a job killed at any instant is found either before or after a step, never half-written.
 */
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import { readLocalText } from '../../internal/local-file.js';
import { randomHex } from '../../internal/random-hex.js';
import { join } from 'node:path';
import type { BatchEndpoint } from '../../client/types.js';
import { isTerminalBatchStatus } from '../../client/facts.js';
import { stateHome } from '../../config/state-dir.js';
import { BatchError, invalid } from '../errors.js';
import { writeWhole } from '../../internal/write-whole.js';
import { describeHolder, holdLockAsync } from '../../internal/file-lock.js';
import { withFileLockAsync } from '../../internal/with-file-lock.js';
import { clearLeftMoves } from '../../internal/lock-mark.js';
import { makeDir } from '../../internal/make-dir.js';
import { isFiniteNumber, isRecord } from '../../internal/shape.js';
import { indexedRoots } from '../local-index.js';
import { rootKey, sameRoot } from '../../internal/api-root.js';
import { keptFileWhy } from '../../internal/named-input.js';
import { sayKeptProblem } from '../../internal/kept-state.js';

export interface RequestCounts {
  total: number;
  completed: number;
  failed: number;
}

export interface ShardRecord {
  index: number;
  /** Input lines [first_line, last_line] at byte offsets [start, end). */
  first_line: number;
  last_line: number;
  start: number;
  end: number;
  /** A retry shard: only these lines of the range, which failed in shard `parent`. */
  lines?: number[] | undefined;
  parent?: number | undefined;
  /** Of those lines, how many had failed (the others had no result): their failure is replaced by this shard's outcome. */
  failed_before?: number | undefined;
  count: number;
  bytes: number;
  /** Records of an older version: Unix seconds (this machine's clock) before its create was sent. */
  submitting_since?: number | undefined;
  /**
   * Set before a create is sent, until its batch id is known: the prefix of every custom_id it
   * sends (only this create uses it, so its results prove a batch is this shard's), and the newest
   * batch the listing held just before (null: none), so a lost create is looked for only among
   * batches the service lists as newer, with no clock compared.
   */
  submitting?: {
    tag?: string | undefined;
    after: { id: string; created_at: number } | null;
    /** The service has no listing: a create whose answer is lost can never be found, so it is never sent again on its own. */
    unlisted?: boolean | undefined;
    /** When the create was sent (ISO 8601, this machine's clock), to name it if its answer is lost. */
    sent_at?: string | undefined;
  } | undefined;
  /** The service's created_at of its batch. */
  created_at?: number | undefined;
  /** The custom_id prefix of the batch it has (absent in records of older versions: ids sent as they are). */
  tag?: string | undefined;
  /** Its batch was found in the listing after a lost create; not yet proven its own by its results. */
  unproven?: boolean | undefined;
  batch_id?: string | undefined;
  status?: string | undefined;
  request_counts?: RequestCounts | undefined;
  usage?: { prompt_tokens?: number | undefined; completion_tokens?: number | undefined; total_tokens?: number | undefined; cost?: number | undefined } | undefined;
}

export interface JobRecord {
  id: string;
  created_at: number;
  updated_at: number;
  /** The file as planned: its path (links resolved), and its content (what a later run of it is known by). */
  input: { path: string; size: number; mtime_ms: number; sha256: string };
  endpoint: BatchEndpoint;
  model: string;
  provider?: { only?: string[] | undefined; allow_fallbacks?: boolean | undefined } | undefined;
  /** Lines are exactly {custom_id, body}: sent unchanged. */
  plain: boolean;
  max_requests: number;
  max_bytes: number;
  /** Bytes of the JSON around a shard's requests. */
  wrapper_bytes: number;
  requests: number;
  shards: ShardRecord[];
  /** Each create sends its custom_ids behind a tag of its own (records of older versions: sent as they are). */
  tagged?: boolean | undefined;
  /** Batches found after a lost create and shown by their results not to be this job's. */
  foreign?: string[] | undefined;
  /** Its place among the jobs of this machine, in order of saving (absent in records of older versions). */
  seq?: number | undefined;
  /** The API root its batches are made at, set before its first create (absent in records of older versions). */
  api_root?: string | undefined;
}

export function jobsDir(env: NodeJS.ProcessEnv): string {
  return join(stateHome(env), 'jobs');
}

/**
 * Marks a job as run by this process until it ends (or the returned release): a second run of it,
 * the same file again or --resume, would send its shards a second time. One left by a killed run is taken over.
 * Its waits (a lock of another machine or namespace watched a few seconds) leave the caller's event loop running.
 */
export async function holdJob(env: NodeJS.ProcessEnv, id: string): Promise<() => void> {
  const lock = join(jobsDir(env), id, 'run.lock');
  // Another runJob of this process runs it: its lock names this very process, which is no stale
  // lock to remove, and following it from here could pay for shards twice.
  if (runningHere.has(lock)) throw new BatchError(`${id} is already being run by this process (another runJob of it has not ended): wait for that one to end`, 'busy', undefined, { about: 'job_running_here', job: id, lock });
  runningHere.add(lock);
  let release: () => void;
  try {
    // Taken over while held (this process not heard for a while, seen from another machine or pid
    // namespace): the next save refuses (saveJob), so the run stops before it sends anything, with a
    // typed error, not an exit of the program that runs it.
    release = await holdLockAsync(
      lock,
      (holder) => new BatchError(`${id} is being run by ${describeHolder(holder)} (if none runs, remove ${lock})`, 'busy', undefined, { about: 'job_busy', job: id, pid: holder.pid, lock }),
      (taker) => lostJobs.set(id, { taker, lock }),
    );
  } catch (err) {
    runningHere.delete(lock);
    throw err;
  }
  removeLeftovers(join(jobsDir(env), id));
  return () => {
    lostJobs.delete(id);
    runningHere.delete(lock);
    release();
  };
}

/** The run locks of jobs this process runs (or is taking), so a second runJob of one is told apart from another process's. */
const runningHere = new Set<string>();

/** Jobs whose run lock this process held and another took over, with the lock's new text. */
const lostJobs = new Map<string, { taker: string; lock: string }>();

/** Temp files of records that runs killed mid-write left (only the run holding the job writes them), and what killed run locks' releases left. */
function removeLeftovers(dir: string): void {
  try {
    const names = readdirSync(dir);
    clearLeftMoves(dir, names);
    for (const name of names) if (name.startsWith('.job.json.')) rmSync(join(dir, name), { force: true });
  } catch {
    /* a folder that cannot be read holds nothing to remove */
  }
}

/** Removes the folder of a job whose first record could not be written (a full disk): no empty job is left. */
export function dropUnsavedJob(env: NodeJS.ProcessEnv, id: string): void {
  const dir = join(jobsDir(env), id);
  removeLeftovers(dir);
  try {
    rmdirSync(dir);
  } catch {
    /* not empty or already gone: left as it is */
  }
}

/**
 * Removes a job this run made and never sent a create for (bad --results, no key, over --max-cost):
 * a refused command leaves no job behind for the next run to take up. Call it while holding the job;
 * when it removes the job, it calls `release` before the folder goes (else it leaves the job held).
 */
export async function discardUnsent(env: NodeJS.ProcessEnv, job: JobRecord, release: () => void): Promise<boolean> {
  if (job.shards.some((s) => s.batch_id || s.submitting || s.submitting_since !== undefined)) return false;
  try {
    await pickingJob(env, () => rmSync(join(jobsDir(env), job.id, 'job.json'), { force: true }));
  } catch {
    return false; // kept, as it was: the failure being reported matters more
  }
  release();
  dropUnsavedJob(env, job.id);
  return true;
}

/** Runs `pick` (find the job of an input, or save a new one) with no other process picking at once. */
export async function pickingJob<T>(env: NodeJS.ProcessEnv, pick: () => T | Promise<T>): Promise<T> {
  makeDir(jobsDir(env));
  return withFileLockAsync(join(jobsDir(env), 'jobs'), pick);
}

export function newJobId(): string {
  const d = new Date();
  const stamp = `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
  return `job_${stamp}_${randomHex(4)}`;
}

export function saveJob(env: NodeJS.ProcessEnv, job: JobRecord): void {
  const lost = lostJobs.get(job.id);
  if (lost) {
    const pid = Number(/^\d+/.exec(lost.taker)?.[0] ?? 0);
    throw new BatchError(`${job.id}: its run was taken over by process ${pid} (${lost.taker}) while this one was not heard; stopped, so no shard is sent twice`, 'busy', undefined, { about: 'job_busy', job: job.id, pid, lock: lost.lock });
  }
  job.updated_at = Math.floor(Date.now() / 1000);
  // Durable: a lost step costs money.
  writeWhole(join(jobsDir(env), job.id, 'job.json'), `${JSON.stringify(job)}\n`, true);
}

export function loadJob(env: NodeJS.ProcessEnv, id: string): JobRecord {
  if (!/^job_[\w-]+$/.test(id)) throw invalid(`"${id}" is not a job id (listJobs lists them)`, { about: 'not_a_job_id', job: id });
  let text: string;
  try {
    text = readLocalText(join(jobsDir(env), id, 'job.json'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A record that is there but cannot be read is no missing job: said as a kept file is, and never written over.
    if (code && code !== 'ENOENT' && code !== 'ENOTDIR') throw new BatchError(`the record of ${id} ${join(jobsDir(env), id, 'job.json')}: ${keptFileWhy(code)}; nothing of the job is sent or written until it can be read`, 'damaged');
    throw new BatchError(`no job ${id} (listJobs lists them)`, 'not_found', undefined, { about: 'no_job', job: id });
  }
  try {
    const job: unknown = JSON.parse(text);
    if (isJobRecord(job)) return job;
  } catch {
    /* damaged, as below */
  }
  throw new BatchError(`the record of ${id} is damaged: ${join(jobsDir(env), id, 'job.json')} (kept as it is: fix it, or move its folder away to forget the job)`, 'damaged');
}

/** What every reader of a job relies on: a record edited by hand may not have it. */
function isJobRecord(j: unknown): j is JobRecord {
  if (!isRecord(j) || !isRecord(j.input)) return false;
  const { input } = j;
  return (
    typeof j.id === 'string' && isFiniteNumber(j.created_at) && typeof j.endpoint === 'string' && typeof j.model === 'string' &&
    isFiniteNumber(j.requests) && isFiniteNumber(j.max_requests) && isFiniteNumber(j.max_bytes) && isFiniteNumber(j.wrapper_bytes) &&
    typeof input.path === 'string' && isFiniteNumber(input.size) && typeof input.sha256 === 'string' &&
    Array.isArray(j.shards) &&
    j.shards.every((sh) => isRecord(sh) && ['index', 'first_line', 'last_line', 'start', 'end', 'count', 'bytes'].every((k) => isFiniteNumber(sh[k])))
  );
}

/** The jobs on this machine, newest first; `onDamaged` hears of each job whose record is damaged. */
export function listJobs(env: NodeJS.ProcessEnv, onDamaged?: (id: string) => void): JobRecord[] {
  let names: string[];
  try {
    names = readdirSync(jobsDir(env));
  } catch {
    return [];
  }
  // What a release of the jobs' lock (`jobs.lock`) killed midway left.
  clearLeftMoves(jobsDir(env), names);
  const jobs: JobRecord[] = [];
  for (const name of names) {
    try {
      jobs.push(loadJob(env, name));
    } catch (err) {
      // Not a job folder, or one with no record: not a job. A record that cannot be read: damaged.
      if (err instanceof BatchError && err.reason === 'damaged') {
        if (onDamaged) onDamaged(name);
        else sayKeptProblem(join(jobsDir(env), name, 'job.json'), 'is damaged or unreadable and left out (fix it, or move its folder away to forget the job)');
      }
    }
  }
  return jobs.sort(newestFirst);
}

/** By `seq` where both have one (a total order of saving); else by created_at, then id (records of older versions). */
function newestFirst(a: JobRecord, b: JobRecord): number {
  if (a.seq !== undefined && b.seq !== undefined) return b.seq - a.seq;
  return b.created_at - a.created_at || (b.seq ?? 0) - (a.seq ?? 0) || b.id.localeCompare(a.id);
}

/** The `seq` of a job saved now: after every job listed. Call it while picking (pickingJob), as the saving does. */
export function nextSeq(jobs: readonly JobRecord[]): number {
  return jobs.reduce((most, j) => Math.max(most, j.seq ?? 0), 0) + 1;
}

export function isFinished(shard: ShardRecord): boolean {
  return shard.status !== undefined && isTerminalBatchStatus(shard.status);
}

/** The API root of a job's batches: its record's, else (a record of an older version) the one the local index saw its first batch at. */
export function jobRoot(job: JobRecord, roots: () => Map<string, string>): string | undefined {
  if (job.api_root !== undefined) return job.api_root;
  const id = job.shards.find((s) => s.batch_id)?.batch_id;
  return id ? roots().get(id) : undefined;
}

/** A job taken up at another API root than its batches' is refused; one that has sent nothing is of this root from now (saved with its first create). */
export function checkJobRoot(env: NodeJS.ProcessEnv, job: JobRecord, here: string): void {
  const at = rootKey(here);
  if (job.api_root === undefined && !job.shards.some((s) => s.batch_id || s.submitting || s.submitting_since)) job.api_root = at;
  const root = jobRoot(job, () => indexedRoots(env));
  if (root !== undefined && !sameRoot(root, at)) throw invalid(`${job.id} was made at ${root}, where its batches are, not at ${at}: run it with that API root, or start another job (fresh)`, { about: 'other_root', job: job.id, api_root: root, here: at });
}

/** Whether a job is one made at `root`: a job whose root is not known (an older version's, its batch not in the index) is of any. */
export function madeAt(job: JobRecord, root: string, roots: () => Map<string, string>): boolean {
  const made = jobRoot(job, roots);
  return made === undefined || sameRoot(made, root);
}

