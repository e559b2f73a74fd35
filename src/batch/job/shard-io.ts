/** Reads a shard's lines back from the input file: only its byte range, in constant memory. */
import { createReadStream } from 'node:fs';
import { isBlank, readLines } from '../../internal/jsonl.js';
import { randomHex } from '../../internal/random-hex.js';
import { topLevelSpan } from '../../internal/json-span.js';
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

/**
 * A create's custom_id prefix: `j`, 12 hex digits, `.`. Each create of a job sends every custom_id
 * behind its own prefix, so the results of a batch show whether that create made it; the merge
 * takes the prefix off again.
 */
export const newTag = () => `j${randomHex(6)}.`;
/** Bytes a tag adds to a request (the element sent is never longer than its line plus these). */
export const TAG_BYTES = 14;

/** The request as sent, in pieces: `{"custom_id": tag + id, "body": …}` with the body's bytes as they are in the line. */
export function taggedRequest(line: Buffer, tag: string): Buffer[] {
  const idSpan = topLevelSpan(line, 'custom_id')!;
  const bodySpan = topLevelSpan(line, 'body')!;
  const id = JSON.parse(line.toString('utf8', ...idSpan)) as string;
  return [Buffer.from(`{"custom_id":${JSON.stringify(tag + id)},"body":`), line.subarray(...bodySpan), CLOSE];
}
const CLOSE = Buffer.from('}');

/**
 * A result item of a tagged create with the caller's own custom_id again, in pieces (every other
 * byte as sent, nothing copied); undefined if it is not the create's.
 */
export function untaggedResult(json: Buffer, tag: string): { id: string; parts: Buffer[] } | undefined {
  const span = topLevelSpan(json, 'custom_id');
  if (!span) return undefined;
  const sent = JSON.parse(json.toString('utf8', ...span)) as unknown;
  if (typeof sent !== 'string' || !sent.startsWith(tag)) return undefined;
  const id = sent.slice(tag.length);
  return { id, parts: [json.subarray(0, span[0]), Buffer.from(JSON.stringify(id)), json.subarray(span[1])] };
}

/** The shard's requests as JSON array elements (for createStreaming), each id behind `tag` if given. */
export function shardRequests(job: JobRecord, shard: ShardRecord, tag?: string): () => AsyncIterable<Uint8Array> {
  return async function* () {
    async function* lines() {
      for await (const { bytes } of shardLines(job, shard)) yield tag ? taggedRequest(bytes, tag) : bytes;
    }
    yield* arrayPieces(lines(), tag ? true : job.plain);
  };
}

export function customIdOf(line: Buffer): string {
  return (JSON.parse(line.toString('utf8')) as { custom_id: string }).custom_id;
}
