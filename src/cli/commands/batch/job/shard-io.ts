/** Reads a shard's lines back from the input file: only its byte range, in constant memory. */
import { createReadStream } from 'node:fs';
import { isBlank, readLines } from '../../../jsonl.js';
import type { JobRecord, ShardRecord } from './store.js';

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

/** The shard's requests as JSON array elements, comma-separated, in 256 KiB pieces (for createStreaming). */
export function shardRequests(job: JobRecord, shard: ShardRecord): () => AsyncIterable<Uint8Array> {
  return async function* () {
    const COMMA = Buffer.from(',');
    let out: Buffer[] = [];
    let size = 0;
    let first = true;
    for await (const { bytes } of shardLines(job, shard)) {
      let item = bytes;
      if (!job.plain) {
        const o = JSON.parse(bytes.toString('utf8')) as { custom_id: string; body: unknown };
        item = Buffer.from(JSON.stringify({ custom_id: o.custom_id, body: o.body }));
      }
      if (!first) out.push(COMMA);
      first = false;
      out.push(item);
      size += item.length + 1;
      if (size >= 256 * 1024) {
        yield Buffer.concat(out);
        out = [];
        size = 0;
      }
    }
    if (out.length) yield Buffer.concat(out);
  };
}

export function customIdOf(line: Buffer): string {
  return (JSON.parse(line.toString('utf8')) as { custom_id: string }).custom_id;
}
