/** The options of a batch job's run (`openJob`, `driveJob`, `runJob`) and the events it tells. */
import { optionNames } from '../../client/option-names.js';
import type { ResultsSink } from '../results.js';
import type { MergeFormat } from './merge.js';
import type { JobRecord, ShardRecord } from './store.js';

/** What a run tells as it goes; every one is optional. */
export interface JobEvents {
  /** A status line for a person: a batch found after a lost create, a create tried again (a failed poll, without `offline`). */
  info?(text: string): void;
  /** A poll that failed and is tried again in `retryInMs` (with `offlineTimeout`), as WatchEvents' offline. */
  offline?(message: string, retryInMs: number): void;
  /** The input's job (the same content and settings, made earlier) is taken up instead of a new one. */
  resumed?(job: JobRecord): void;
  /** The job is held and checked; nothing of this run is sent yet. Its id is `job.id`. */
  started?(job: JobRecord): void;
  /** With `retryFailed`: how many requests go again in new shards (0: none failed). */
  retrying?(job: JobRecord, requests: number): void;
  /** A shard has its batch. */
  submitted?(job: JobRecord, shard: ShardRecord): void;
  /** While following: a line of progress; `changed` when a poll saw something new. */
  progress?(job: JobRecord, line: string, phase: 'start' | 'poll' | 'end', changed: boolean): void;
  /** The shards as last seen, before any merge (the ended ones keep their status and usage). */
  settled?(job: JobRecord): void;
  /** Interrupted, or the service gone or failing: the job is saved and its batches keep running. */
  stopped?(job: JobRecord, err: unknown): void;
}

export interface OpenJobOptions {
  /** The JSONL file: a new job, or the job made earlier from this content with the same settings. */
  input?: string | undefined;
  /** A job id to take up instead (no input then). */
  resume?: string | undefined;
  endpoint?: string | undefined;
  model?: string | undefined;
  /** The model when neither `model` nor the bodies name one (asked only when a job is planned). */
  defaultModel?: (() => Promise<string | undefined>) | undefined;
  provider?: JobRecord['provider'];
  /** Requests per batch (default the service's limit). */
  maxRequests?: number | undefined;
  /** Request body bytes per batch (default the service's limit). */
  maxBytes?: number | undefined;
  /** A new job even if this input has one. */
  fresh?: boolean | undefined;
  /** The API root the job is run at (as the client has it): the input's job is one made there. */
  apiRoot?: string | undefined;
  /** Where jobs are kept: $ROUTER_STATE_DIR or $XDG_STATE_HOME/router, under jobs/ (default process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  on?: JobEvents | undefined;
}

export interface DriveOptions {
  /** Submit again, in new shards, the requests that failed or never ran (every shard must have ended). */
  retryFailed?: boolean | undefined;
  /** Send again a shard whose create's answer was lost where the service has no listing (it may be billed twice). */
  resubmitLost?: boolean | undefined;
  /** Follow the job until every shard has ended. */
  watch?: boolean | undefined;
  /** Follow, then hand every result in input order to `write` (format: as is, with "line", or joined to its request). */
  results?: { write: ResultsSink; format?: MergeFormat | undefined } | undefined;
  /** First polling interval, seconds (default 2); it grows while nothing changes. */
  interval?: number | undefined;
  /** Seconds to keep following through network errors, 429 and 5xx (default 0: the first failure stops the run). */
  offlineTimeout?: number | undefined;
  /** Called before anything is submitted, and again before retries are: throw to refuse (nothing is sent). */
  checkSpend?: ((job: JobRecord) => Promise<void>) | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  signal?: AbortSignal | undefined;
  on?: JobEvents | undefined;
}

export interface RunJobOptions extends OpenJobOptions, DriveOptions {}

// The names of each options type, checked against it both ways: a call refuses one it does not know (checkOptions).
export const OPEN = optionNames<OpenJobOptions>()({ input: 1, resume: 1, endpoint: 1, model: 1, defaultModel: 1, provider: 1, maxRequests: 1, maxBytes: 1, fresh: 1, apiRoot: 1, env: 1, on: 1 });
export const DRIVE = optionNames<DriveOptions>()({ retryFailed: 1, resubmitLost: 1, watch: 1, results: 1, interval: 1, offlineTimeout: 1, checkSpend: 1, env: 1, signal: 1, on: 1 });
