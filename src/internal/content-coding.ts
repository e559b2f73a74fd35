import { Readable, pipeline, type Transform } from 'node:stream';
import * as zlib from 'node:zlib';

/** A body coded in a way this node cannot undo (`zstd` before node 22.15, `compress`): nothing of it can be read. */
export class UnknownCodingError extends Error {
  constructor(readonly coding: string) {
    super(`the answer is coded "${coding}", which cannot be decoded here`);
    this.name = 'UnknownCodingError';
  }
}

type Decoder = (source: AsyncIterable<Uint8Array>) => AsyncIterable<Uint8Array>;

const through = (make: () => Transform): Decoder =>
  (source) => {
    const decoder = make();
    // pipeline: a failing source fails the decoder, and a reader that stops early ends the source.
    pipeline(Readable.from(source, { objectMode: false }), decoder, () => {});
    return decoder;
  };

/** "deflate" is a zlib stream by the RFC, raw deflate by some servers: told apart by the zlib header. */
const inflateEither: Decoder = async function* (source) {
  const it = source[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  let ended = false;
  while (head.length < 2 && !ended) {
    const step = await it.next();
    if (step.done) ended = true;
    else head = Buffer.concat([head, step.value]);
  }
  const wrapped = head.length >= 2 && (head[0]! & 0x0f) === 8 && head.readUInt16BE(0) % 31 === 0;
  async function* all(): AsyncGenerator<Uint8Array> {
    if (head.length) yield head;
    if (ended) return;
    for (let step = await it.next(); !step.done; step = await it.next()) yield step.value;
  }
  yield* through(() => (wrapped ? zlib.createInflate() : zlib.createInflateRaw()))(all());
};

const zstd = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;

const DECODERS: Record<string, Decoder> = {
  gzip: through(() => zlib.createGunzip()),
  'x-gzip': through(() => zlib.createGunzip()),
  br: through(() => zlib.createBrotliDecompress()),
  deflate: inflateEither,
  ...(zstd ? { zstd: through(zstd) } : {}),
};

/** The codings a Content-Encoding header lists, in the order they were applied ("identity" is none). */
export function codingsOf(header: string | string[] | undefined): string[] {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return text.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c && c !== 'identity');
}

/** A body's bytes with its Content-Encoding undone; a coding not known here fails the first read (UnknownCodingError). */
export async function* decodedBody(chunks: AsyncIterable<Uint8Array>, contentEncoding: string | string[] | undefined): AsyncGenerator<Uint8Array> {
  const codings = codingsOf(contentEncoding);
  const unknown = codings.find((c) => !DECODERS[c]);
  if (unknown !== undefined) throw new UnknownCodingError(unknown);
  let body: AsyncIterable<Uint8Array> = chunks;
  for (const coding of codings.reverse()) body = DECODERS[coding]!(body);
  yield* body;
}
