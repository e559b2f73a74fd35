/** The results of one batch, read as they arrive, and what the service's batch-specific refusals mean. */
import type { RouterClient } from '../client/index.js';
import { APIError } from '../client/errors.js';
import { isTerminalBatchStatus } from '../client/facts.js';
import type { Batch } from '../client/types.js';
import { BatchError } from './errors.js';

/** Explains the batch-specific answers of Get a batch. */
export function batchError(err: unknown, id: string): unknown {
  if (!(err instanceof APIError)) return err;
  if (err.status === 402) {
    const batch = batchOf402(err);
    // A completed batch has no reason of its own: its error is the 402's own words.
    const own = batch?.error?.message && batch.status !== 'completed' ? ` (the batch ${batch.status}: ${batch.error.message})` : '';
    return new BatchError(`the finalized cost of ${id} exceeds your balance${own}: add credits, then get its results again`, 'payment', undefined, { about: 'results_owed', batch: id, why: own, ...(batch ? { owed: batch } : {}) });
  }
  if (err.status === 410) return new BatchError(`the results of ${id} were deleted after the 30-day retention`, 'not_found');
  if (err.status === 404) {
    const url = (err as { url?: string }).url;
    return new BatchError(`no batch ${id} in this workspace${url ? ` (asked GET ${url})` : ''}`, 'not_found');
  }
  return err;
}

/** The spec's body of a 402 on Get a batch: the batch metadata with results null (undefined for another body). */
export function batchOf402(err: unknown): Batch | undefined {
  if (!(err instanceof APIError) || err.status !== 402) return undefined;
  const body = err.body as Partial<Batch> | null | undefined;
  return body && typeof body === 'object' && typeof body.id === 'string' && typeof body.status === 'string' && body.request_counts ? (body as Batch) : undefined;
}

/** Where results go, a chunk of JSONL at a time (a file, stdout, a program's own buffer). */
export type ResultsSink = (chunk: Buffer) => Promise<void> | void;

/**
 * Hands the results of an ended batch to `write` as JSONL (one result a line, in pieces of about
 * 256 KiB) and returns the batch metadata. A batch that has not ended throws ('not_ended') after
 * what it had was written: the caller keeps or drops it.
 */
export async function streamResults(client: RouterClient, id: string, write: ResultsSink, signal?: AbortSignal): Promise<Batch> {
  const NL = Buffer.from('\n');
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    if (!pending.length) return;
    const data = Buffer.concat(pending);
    pending = [];
    size = 0;
    await write(data);
  };
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
    if (!isTerminalBatchStatus(batch.status)) throw new BatchError(`${id} is ${batch.status}: results come once it ends (watch it)`, 'not_ended', undefined, { about: 'results_not_ready', batch: id, status: batch.status });
    return batch;
  } catch (err) {
    throw batchError(err, id);
  }
}
