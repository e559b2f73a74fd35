/**
 * Results of a job in the order of the input lines, one final result per line: a shard's results
 * are read into memory (bounded by the shard size), later attempts (retries) replace earlier
 * failures, and the shard's input lines are read back to put them in order.
 */
import type { RouterClient } from '../../client/index.js';
import { batchError, type ResultsSink } from '../results.js';
import { invalid } from '../errors.js';
import { ConnectionError } from '../../client/errors.js';
import { backoffDelay } from '../../client/retry.js';
import { sleep } from '../../internal/sleep.js';
import { customIdOf, shardLines, TAG_BYTES, untaggedResult } from './shard-io.js';
import { isFinished, type JobRecord, type ShardRecord } from './store.js';
import { counted } from '../../internal/counted.js';

export type MergeFormat = 'results' | 'numbered' | 'joined';
const NEWLINE = Buffer.from('\n');

interface Outcome {
  /** The result line, in pieces. */
  parts: Buffer[];
  failed: boolean;
}

/** A result item, and the caller's custom_id if a tag is taken off (`parts` then hold the line without it). */
function outcomeOf(json: Buffer, own?: { id: string; parts: Buffer[] }): { id: string; outcome: Outcome } {
  const o = JSON.parse(json.toString('utf8')) as { custom_id: string; error?: unknown; response?: { status_code?: number } | null };
  const failed = !!o.error || !o.response || (o.response.status_code ?? 200) >= 400;
  if (own) o.custom_id = own.id;
  // A result with a raw line break inside (pretty-printed) is made one line again.
  const parts = json.includes(10) ? [Buffer.from(JSON.stringify(o))] : (own?.parts ?? [json]);
  return { id: o.custom_id, outcome: { parts, failed } };
}

export const originals = (job: JobRecord) => job.shards.filter((s) => s.parent === undefined);
const attemptsOf = (job: JobRecord, p: ShardRecord) => [p, ...job.shards.filter((s) => s.parent === p.index)];

/** The latest outcome of each request of shard `p`, over its retries. */
async function finalOutcomes(client: RouterClient, job: JobRecord, p: ShardRecord, signal: AbortSignal): Promise<Map<string, Outcome>> {
  const map = new Map<string, Outcome>();
  for (const s of attemptsOf(job, p)) {
    if (!s.batch_id || !isFinished(s)) continue;
    const read = () =>
      client.batches.getStreaming(s.batch_id!, (json) => {
        // Only results that carry the tag of this shard's create are its own (and lose the tag here).
        const own = s.tag ? untaggedResult(json, s.tag) : undefined;
        if (s.tag && !own) return;
        const { id, outcome } = outcomeOf(json, own);
        map.set(id, outcome);
      }, { signal });
    await readAgainIfCut(client, read, signal).catch((err: unknown) => Promise.reject(batchError(err, s.batch_id!)));
  }
  return map;
}

/**
 * A download cut or stalled mid-body is read again from the start, as a failed GET is retried
 * (--max-retries, with backoff): reading the same results twice sets the same outcomes.
 */
async function readAgainIfCut(client: RouterClient, read: () => Promise<unknown>, signal: AbortSignal): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await read();
      return;
    } catch (err) {
      if (!(err instanceof ConnectionError) || signal.aborted || attempt >= client.core.maxRetries) throw err;
      await sleep(backoffDelay(attempt, undefined), signal);
    }
  }
}

function missingResult(customId: string, shard: ShardRecord): Buffer {
  const why = shard.batch_id ? `its batch ${shard.batch_id} ended ${shard.status} before this request ran` : 'its shard was never submitted';
  return Buffer.from(JSON.stringify({ custom_id: customId, id: null, response: null, error: { type: 'missing_result', message: `no result: ${why}`, param: null } }));
}

export interface MergeCounts {
  lines: number;
  failed: number;
}

/** Hands `write` one line per input line, in input order; returns how many and how many failed. */
export async function writeMerged(write: ResultsSink, client: RouterClient, job: JobRecord, format: MergeFormat, signal: AbortSignal): Promise<MergeCounts> {
  const counts: MergeCounts = { lines: 0, failed: 0 };
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    const data = Buffer.concat(pending);
    pending = [];
    size = 0;
    await write(data);
  };
  for (const p of originals(job)) {
    const outcomes = await finalOutcomes(client, job, p, signal);
    for await (const { number, bytes } of shardLines(job, p)) {
      const id = customIdOf(bytes);
      const outcome = outcomes.get(id);
      const result = outcome?.parts ?? [missingResult(id, p)];
      counts.lines++;
      if (!outcome || outcome.failed) counts.failed++;
      let line: Buffer[];
      if (format === 'results') line = result;
      else if (format === 'numbered') line = [Buffer.from(`{"line":${number},`), result[0]!.subarray(1), ...result.slice(1)];
      else line = [Buffer.from(`{"line":${number},"request":`), bytes, Buffer.from(',"result":'), ...result, Buffer.from('}')];
      for (const piece of line) {
        pending.push(piece);
        size += piece.length;
      }
      pending.push(NEWLINE);
      size += 1;
      if (size >= 256 * 1024) await flush();
    }
  }
  await flush();
  return counts;
}

/**
 * New retry shards for the requests whose latest outcome failed or is missing (an expired or
 * failed batch), one or more per original shard; returns how many requests they carry.
 */
export async function addRetryShards(client: RouterClient, job: JobRecord, signal: AbortSignal): Promise<number> {
  const running = job.shards.filter((s) => !isFinished(s));
  if (running.length) throw invalid(`${counted(running.length, 'shard')} of ${job.id} ${running.length === 1 ? 'has' : 'have'} not ended yet: watch it, then retry what failed`, { about: 'shards_running', job: job.id, running: running.length });
  let added = 0;
  for (const p of originals(job)) {
    const outcomes = await finalOutcomes(client, job, p, signal);
    let chunk: ShardRecord | undefined;
    for await (const { number, bytes } of shardLines(job, p)) {
      const outcome = outcomes.get(customIdOf(bytes));
      if (outcome && !outcome.failed) continue;
      const size = bytes.length + 1 + (job.tagged ? TAG_BYTES : 0);
      if (!chunk || chunk.count >= job.max_requests || chunk.bytes + size > job.max_bytes) {
        chunk = { index: job.shards.length, parent: p.index, first_line: p.first_line, last_line: p.last_line, start: p.start, end: p.end, lines: [], count: 0, bytes: job.wrapper_bytes - 1, failed_before: 0 };
        job.shards.push(chunk);
      }
      chunk.lines!.push(number);
      chunk.count++;
      chunk.bytes += size;
      if (outcome) chunk.failed_before!++;
      added++;
    }
  }
  return added;
}
