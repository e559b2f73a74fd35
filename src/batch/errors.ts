/**
 * The one error the batch engine throws of its own (besides the client's): a message for a person
 * and a reason a caller can act on. The CLI maps each reason to an exit code in src/cli/errors.ts.
 */
import type { Batch } from '../client/types.js';

export type BatchErrorReason =
  /** The input, or what was asked of it, is wrong; nothing was sent. */
  | 'invalid'
  /** No such batch, job or results (deleted after the retention). */
  | 'not_found'
  /** The batch's finalized cost exceeds the balance: its results wait for credits. */
  | 'payment'
  /** Another process (or another runJob of this one) runs this job. */
  | 'busy'
  /** A job record that cannot be read. */
  | 'damaged'
  /** The batch has not ended: it has no results yet. */
  | 'not_ended'
  /** The fate of a create is unknown (its answer was lost), or the service stopped answering. */
  | 'network';

/**
 * What a failure is about, with its facts, for a caller that words it its own way (the CLI names
 * its flags and commands); the message names the options of the library.
 */
export type BatchErrorData =
  | { about: 'resume_with_input'; job: string; input: string }
  /** A plan option given to resume that is not the job's own: the job keeps its plan. */
  | { about: 'resume_with_plan'; job: string; option: 'endpoint' | 'model' | 'provider' | 'maxRequests' | 'maxBytes' | 'fresh'; kept: string }
  | { about: 'no_model' }
  /** Problems of an input's lines: each line with marks where it names an option (scan.ts `wordLines`). */
  | { about: 'bad_lines'; templates: string[] }
  | { about: 'lost_create'; job: string; shard: number; matches: string[] }
  /** A create whose answer was lost, where the service has no listing to find its batch by. */
  | { about: 'lost_unlisted'; job: string; shard: number; sent_at: string; lines: string }
  | { about: 'not_its_batch'; job: string; shard: number; batch: string }
  | { about: 'job_busy'; job: string; pid: number; lock: string }
  /** Another runJob of this same process runs the job (its lock is no one else's to remove). */
  | { about: 'job_running_here'; job: string; lock: string }
  | { about: 'not_a_job_id'; job: string }
  | { about: 'no_job'; job: string }
  /** A job record that cannot be read, or is damaged, and may be the job of the input run: a new job could send its batches again. */
  | { about: 'damaged_job'; job: string; record: string; what: 'cannot be read' | 'is damaged' }
  | { about: 'shards_running'; job: string; running: number }
  /** The input a job reads its shards back from is gone or changed: its batches' results are still had one by one. */
  | { about: 'input_changed'; job: string; input: string; gone: boolean; batches: string[] }
  /** `owed`: the batch as the 402 shows it (its usage names what is owed, where the service says). */
  | { about: 'results_owed'; batch: string; why: string; owed?: Batch | undefined }
  /** A job taken up at another API root than the one its batches were made at. */
  | { about: 'other_root'; job: string; api_root: string; here: string }
  | { about: 'results_not_ready'; batch: string; status: string };

export class BatchError extends Error {
  override readonly name = 'BatchError';
  constructor(
    message: string,
    readonly reason: BatchErrorReason,
    /** Several problems, each a line of its own (the message joins them). */
    readonly lines?: string[],
    readonly data?: BatchErrorData,
  ) {
    super(message);
  }
}

export const invalid = (message: string, data?: BatchErrorData) => new BatchError(message, 'invalid', undefined, data);

/** The words a problem line names an option by: the library's own (a caller words them its way with `wordLines`). */
export const LIBRARY_WORDS = { model: 'model', endpoint: 'endpoint', split: 'runJob splits a file into as many batches as it needs' };
export type OptionWords = Record<keyof typeof LIBRARY_WORDS, string>;

/** A mark in a line where it names an option (kept in BatchErrorData's templates). */
export const term = (name: keyof OptionWords) => `\u0001${name}\u0001`;

export function wordLines(templates: readonly string[], words: OptionWords): string[] {
  return templates.map((t) => t.replace(/\u0001(\w+)\u0001/g, (_, k: string) => words[k as keyof OptionWords] ?? k));
}
