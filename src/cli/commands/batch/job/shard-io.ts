/** Reads a shard's lines back from the input file: only its byte range, in constant memory. */
import { createReadStream } from 'node:fs';
import { isBlank, readLines } from '../../../jsonl.js';
import type { JobRecord, ShardRecord } from './store.js';
import { arrayPieces } from '../upload.js';

export interface ShardLine {
  number: number;
  /** The request line as read. */
  bytes: Buffer;
}

export async function* shardLines(job: JobRecord, shard: ShardRecord): AsyncGenerator<ShardLine> {
  if (shard.end <= shard.start) return;
  const only = shard.lines ? new Set(shard.lines) : undefined;
  const source = createReadStream(job.input.path, { start: shard.start, end: shard.end - 1, highWaterMark: 256 * 1024 });
  for await (const { number, bytes } of readLines(source, shard.first_line, shard.start)) {
    if (isBlank(bytes) || (only && !only.has(number))) continue;
    yield { number, bytes };
  }
}

/** The shard's requests as JSON array elements (for createStreaming). */
export function shardRequests(job: JobRecord, shard: ShardRecord): () => AsyncIterable<Uint8Array> {
  return async function* () {
    async function* lines() {
      for await (const { bytes } of shardLines(job, shard)) yield bytes;
    }
    yield* arrayPieces(lines(), job.plain);
  };
}

export function customIdOf(line: Buffer): string {
  return (JSON.parse(line.toString('utf8')) as { custom_id: string }).custom_id;
}
