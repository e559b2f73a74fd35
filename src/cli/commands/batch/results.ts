/** Where the results of `batch create --watch`, `get` and `run` go, and the ledger record of a batch that ended. */
import type { RouterClient } from '../../../client/index.js';
import { isTerminalBatchStatus } from '../../../client/facts.js';
import type { Batch } from '../../../client/types.js';
import { streamResults, type ResultsSink } from '../../../batch/results.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import type { IO } from '../../io/io.js';
import { sameFile, type OutputFile } from '../../io/output-file.js';
import type { RunContext } from '../../run.js';
import { batchHoldPath, usageFields } from '../../../kit/spend/ledger.js';
import { existsSync } from 'node:fs';
import { counted, grouped } from '../../../internal/counted.js';
import { BatchError } from '../../../batch/errors.js';
import { linkSeen } from '../../spend/sent-seen.js';
import { batchSpan, markBatchEnded } from '../../../kit/spend/reconcile-batch.js';

/** Where results go: an output file opened (and checked) before anything is sent, or stdout. */
export type ResultsTarget = { file: OutputFile } | { stdout: true };

/** Opens `--results [FILE]`: no FILE or "-" is stdout. Never the requests file itself (`input`), under any name. */
export async function openResults(target: string | true, input?: string): Promise<ResultsTarget> {
  if (target === true || target === '-') return { stdout: true };
  if (input !== undefined) refuseResultsOverInput(target, input);
  const { OutputFile } = await import('../../io/output-file.js');
  return { file: OutputFile.open(target) };
}

/** Said whatever the terminal: a batch that completed with failed requests (`fetch`: how to have its results, when they were not written). */
export function sayFailed(io: IO, id: string, batch: Batch, fetch = ''): void {
  const { failed, total } = batch.request_counts ?? { failed: 0, total: 0 };
  if (failed > 0) io.note(`${id}: ${grouped(failed)} of ${counted(total, 'request')} failed: see their "error" in the results${fetch}`);
}

/**
 * Why a batch that ended is a failure to a script (exit 9), or nothing: it ended failed, expired or cancelled,
 * or it completed with every request failed (no answer to keep: a script must not take it as done).
 */
export function batchEndFailure(b: Batch): CliError | undefined {
  if (!isTerminalBatchStatus(b.status)) return undefined;
  if (b.status !== 'completed') return new CliError(`${b.id} ${b.status}${b.error ? `: ${b.error.message}` : ''}`, EXIT.BATCH_FAILED);
  const { completed, failed, total } = b.request_counts ?? { completed: 0, failed: 0, total: 0 };
  if (total > 0 && completed === 0 && failed === total) return new CliError(`${b.id} completed, but all ${counted(total, 'request')} failed: see their "error" in the results`, EXIT.BATCH_FAILED);
  return undefined;
}

/** Writes the results as JSONL, to a file (atomically) or stdout; returns the batch metadata. */
export async function writeResults(io: IO, client: RouterClient, id: string, target: ResultsTarget, signal: AbortSignal): Promise<Batch> {
  const file = 'file' in target ? target.file : undefined;
  const onAbort = () => file?.abortSync();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const cut = new CutAnswers();
    const sink = sinkOf(io, target);
    const batch = await streamResults(client, id, (chunk) => (cut.see(chunk), sink(chunk)), signal);
    if (file) await file.commit();
    // Said whatever the terminal, as batch run says it: results written are not results that all succeeded.
    sayFailed(io, id, batch);
    cut.say(io, id, batch.request_counts?.total ?? 0);
    return batch;
  } catch (err) {
    file?.abortSync();
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A result whose answer was cut at its length limit: chat's finish_reason "length", a Responses answer incomplete at max_output_tokens. */
const CUT_CHAT = /"finish_reason"\s*:\s*"length"/;
const CUT_RESPONSES = /"incomplete_details"\s*:\s*\{\s*"reason"\s*:\s*"max_output_tokens"/;

/**
 * Counts the result lines whose answer was cut at its length limit, as chunks of JSONL go by, so that
 * a batch's cut answers are said on stderr (piped too), as chat says one. The keys are ASCII: latin1
 * reads them whatever a chunk's end splits; a line that ends in a later chunk is carried to it.
 */
export class CutAnswers {
  private chat = 0;
  private responses = 0;
  private tail = '';
  see(chunk: Buffer): void {
    const lines = (this.tail + chunk.toString('latin1')).split('\n');
    this.tail = lines.pop()!;
    for (const line of lines) this.count(line);
  }
  private count(line: string): void {
    if (CUT_CHAT.test(line)) this.chat++;
    else if (CUT_RESPONSES.test(line)) this.responses++;
  }
  /** One line on stderr when any was cut: how many, and the way to let them finish (in the words of the endpoint's results). */
  say(io: IO, id: string, total: number): void {
    this.count(this.tail);
    this.tail = '';
    const n = this.chat + this.responses;
    if (n === 0) return;
    const [field, limit] = this.chat ? ['finish_reason "length"', 'max_tokens'] : ['status "incomplete"', 'max_output_tokens'];
    io.note(`note: ${id}: ${grouped(n)} of ${counted(total, 'answer')} ${n === 1 ? 'was' : 'were'} cut at the length limit (${field} in the results; a larger ${limit} in ${n === 1 ? 'its line lets it' : 'their lines lets them'} finish)`);
  }
}

/** Where chunks of results go: the file, or stdout (waiting for it to drain). */
export function sinkOf(io: IO, target: ResultsTarget): ResultsSink {
  if ('file' in target) return (chunk) => target.file.write(chunk);
  return async (chunk) => {
    if (!io.out(chunk)) await io.drain();
  };
}

/**
 * A batch that ended goes to the usage ledger with its usage (the report keeps the latest record of each batch); its
 * cost, once there, lets its budget hold go. One that ended with no request completed (failed, expired, cancelled) cost
 * nothing, though its usage names no cost (the deployed service's is null unless completed): 0. One whose completed
 * requests' cost nothing names stays held (its bound, 48 hours).
 */
export function logBatch(ctx: Pick<RunContext<unknown>, 'logUsage' | 'io' | 'env'>, b: Pick<Batch, 'id' | 'model' | 'status' | 'usage'> & { request_counts?: Partial<Batch['request_counts']> | undefined }): void {
  if (!isTerminalBatchStatus(b.status)) return;
  const used = usageFields(b.usage as Record<string, unknown> | undefined);
  if (used.cost === undefined && b.request_counts?.completed === 0) used.cost = 0;
  ctx.logUsage({ endpoint: '/v1/batches', model: b.model, batch_id: b.id, ...used, ...(used.cost !== undefined ? batchSpan(ctx.env, b.id) : {}) });
  // Said, as the budgets stay lowered by it: the service names no cost of the requests that completed.
  if (used.cost === undefined && existsSync(batchHoldPath(ctx.env, b.id))) {
    markBatchEnded(ctx.env, b.id, b.request_counts?.completed ?? 1, b.model);
    ctx.io.note(`note: ${b.id} ended ${b.status} and the service names no cost for its completed requests: its bound stays held against the budgets, until router usage --reconcile settles it by its key's spend (a management key, an hour from now), or for 48 hours after it was made`);
  }
}

/**
 * A Get answered 402 for a batch that ended (its finalized cost exceeds the balance): what it owes is money spent, charged
 * once credits cover it, whoever asks then. Its line goes to the ledger now, as the batch seen ended (counted once, at its
 * latest figures), so that its hold is settled by that cost, not left to lapse while the debt stays unseen.
 */
export function logOwed(ctx: Pick<RunContext<unknown>, 'logUsage' | 'io' | 'env'>, apiRoot: string, err: unknown): void {
  const owed = err instanceof BatchError && err.data?.about === 'results_owed' ? err.data.owed : undefined;
  if (!owed) return;
  // As a batch seen ended: the hold an unanswered create kept for it is settled by its cost, not kept beside it.
  linkSeen(ctx.env, apiRoot, [owed]);
  logBatch(ctx, owed);
}

/** Results written over the requests file would replace the requests (and a job could never be resumed). */
export function refuseResultsOverInput(target: string | true | undefined, input: string): void {
  if (typeof target === 'string' && target !== '-' && sameFile(target, input)) {
    throw usage(`--results ${target} is the requests file: the results would replace the requests; give another file`);
  }
}
