/** A checked requests file as the body of a create: JSON array elements, in pieces (never whole in memory). */
import type { Scan } from './scan.js';

const PIECE_BYTES = 256 * 1024;

/**
 * Request lines as JSON array elements, comma-separated, in 256 KiB pieces; a line that is not
 * exactly {custom_id, body} (it has method and url) is reduced to those two.
 */
export async function* arrayPieces(lines: AsyncIterable<Buffer | Buffer[]>, plain: boolean): AsyncGenerator<Uint8Array, void, undefined> {
  const COMMA = Buffer.from(',');
  let out: Buffer[] = [];
  let size = 0;
  let first = true;
  for await (const bytes of lines) {
    // An element may come in pieces (sent one after the other, never joined first).
    let items = Array.isArray(bytes) ? bytes : [bytes];
    if (!plain && !Array.isArray(bytes)) {
      const o = JSON.parse(bytes.toString('utf8')) as { custom_id: string; body: unknown };
      items = [Buffer.from(JSON.stringify({ custom_id: o.custom_id, body: o.body }))];
    }
    if (!first) out.push(COMMA);
    first = false;
    for (const item of items) {
      out.push(item);
      size += item.length;
    }
    size += 1;
    if (size >= PIECE_BYTES) {
      yield Buffer.concat(out);
      out = [];
      size = 0;
    }
  }
  if (out.length) yield Buffer.concat(out);
}

/** The requests of a checked file, read again from it (for createStreaming). */
export function requestStream(scan: Scan): () => AsyncIterable<Uint8Array, void, undefined> {
  return async function* () {
    const { readLines, isBlank } = await import('../internal/jsonl.js');
    async function* lines() {
      for await (const { bytes } of readLines(scan.file)) if (!isBlank(bytes)) yield bytes;
    }
    yield* arrayPieces(lines(), scan.plain);
  };
}
