import type { RouterClient } from '../../../client/index.js';
import { APIError } from '../../../client/errors.js';
import { isTerminalBatchStatus } from '../../../client/facts.js';
import type { Batch } from '../../../client/types.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import type { IO } from '../../io.js';
import { sameFile, type OutputFile } from '../../output-file.js';
import type { RunContext } from '../../run.js';
import { usageFields } from '../../ledger.js';

/** Explains the batch-specific answers of Get a batch. */
export function batchError(err: unknown, id: string): unknown {
  if (!(err instanceof APIError)) return err;
  if (err.status === 402) {
    const batch = batchOf402(err);
    const own = batch?.error?.message ? ` (the batch ${batch.status}: ${batch.error.message})` : '';
    return new CliError(`the finalized cost of ${id} exceeds your balance${own}: add credits, then run "router batch get ${id}" again to get the results`, EXIT.PAYMENT);
  }
  if (err.status === 410) return new CliError(`the results of ${id} were deleted after the 30-day retention`, EXIT.NOT_FOUND);
  if (err.status === 404) return new CliError(`no batch ${id} in this workspace`, EXIT.NOT_FOUND);
  return err;
}

/** The spec's body of a 402 on Get a batch: the batch metadata with results null (undefined for another body). */
export function batchOf402(err: unknown): Batch | undefined {
  if (!(err instanceof APIError) || err.status !== 402) return undefined;
  const body = err.body as Partial<Batch> | null | undefined;
  return body && typeof body === 'object' && typeof body.id === 'string' && typeof body.status === 'string' && body.request_counts ? (body as Batch) : undefined;
}

/** Where results go: an output file opened (and checked) before anything is sent, or stdout. */
export type ResultsTarget = { file: OutputFile } | { stdout: true };

/** Opens `--results [FILE]`: no FILE or "-" is stdout. Never the requests file itself (`input`), under any name. */
export async function openResults(target: string | true, input?: string): Promise<ResultsTarget> {
  if (target === true || target === '-') return { stdout: true };
  if (input !== undefined) refuseResultsOverInput(target, input);
  const { OutputFile } = await import('../../output-file.js');
  return { file: OutputFile.open(target) };
}

/** Writes the results as JSONL, to a file (atomically) or stdout; returns the batch metadata. */
export async function writeResults(io: IO, client: RouterClient, id: string, target: ResultsTarget, signal: AbortSignal): Promise<Batch> {
  const file = 'file' in target ? target.file : undefined;
  const NL = Buffer.from('\n');
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    if (!pending.length) return;
    const data = Buffer.concat(pending);
    pending = [];
    size = 0;
    if (file) await file.write(data);
    else if (!io.out(data)) await io.drain();
  };
  const onAbort = () => file?.abortSync();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const batch = await client.batches.getStreaming(
      id,
      async (json) => {
        const line = json.includes(10) ? Buffer.from(JSON.stringify(JSON.parse(json.toString('utf8')))) : json;
        pending.push(line, NL);
        size += line.length + 1;
        if (size >= 256 * 1024) await flush();
      },
      { signal },
    );
    await flush();
    if (!isTerminalBatchStatus(batch.status)) {
      throw new CliError(`${id} is ${batch.status}: results come once it ends (use --watch)`, EXIT.FAILURE);
    }
    if (file) await file.commit();
    return batch;
  } catch (err) {
    file?.abortSync();
    throw batchError(err, id);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A batch that ended goes to the usage ledger with its usage (the report keeps the latest record of each batch). */
export function logBatch(ctx: Pick<RunContext<unknown>, 'logUsage'>, b: Pick<Batch, 'id' | 'model' | 'status' | 'usage'>): void {
  if (isTerminalBatchStatus(b.status)) ctx.logUsage({ endpoint: '/v1/batches', model: b.model, batch_id: b.id, ...usageFields(b.usage as Record<string, unknown> | undefined) });
}

/** Results written over the requests file would replace the requests (and a job could never be resumed). */
export function refuseResultsOverInput(target: string | true | undefined, input: string): void {
  if (typeof target === 'string' && target !== '-' && sameFile(target, input)) {
    throw usage(`--results ${target} is the requests file: the results would replace the requests; give another file`);
  }
}
