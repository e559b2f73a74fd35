/** `router api`'s answer body: decoded, its keys hidden, printed as it comes with bounded memory. */
import { BytesRedactor } from '../../internal/redact-bytes.js';
import type { KeyMark } from '../../internal/key-marks.js';
import { decodedBody, UnknownCodingError } from '../../internal/content-coding.js';
import { bodyChunks } from '../../client/body-chunks.js';
import type { RawResponse } from '../../client/core.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { IO } from '../io/io.js';

/** Bytes held before printing: a made thing's id is known first, and a short refusal's words. */
export const HELD_BYTES = 1024 * 1024;

/** The answer's body decoded and with the keys hidden, in pieces as it comes. */
export async function* shownBody(res: RawResponse, url: string, secrets: readonly string[], marks: readonly KeyMark[] = []): AsyncGenerator<Buffer> {
  const redactor = new BytesRedactor(secrets, marks);
  try {
    for await (const piece of decodedBody(bodyChunks(res, url), res.headers['content-encoding'])) {
      const shown = redactor.push(piece);
      if (shown.length) yield shown;
    }
  } catch (err) {
    if (err instanceof UnknownCodingError) throw new CliError(`${err.message}: nothing of it was printed (a key in it could not be hidden); ask for another with -H 'Accept-Encoding: identity'`, EXIT.SERVER);
    // zlib's own failures (a cut or damaged gzip body) carry codes like Z_DATA_ERROR or Z_BUF_ERROR.
    if (typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('Z_')) throw new CliError(`the answer's ${res.headers['content-encoding']} body cannot be decoded: ${(err as Error).message}`, EXIT.SERVER);
    throw err;
  }
  const rest = redactor.end();
  if (rest.length) yield rest;
}

/** The body's first `limit` bytes (or a piece more), and whether more is to come. */
export async function holdFirst(body: AsyncGenerator<Buffer>, limit: number): Promise<{ head: Buffer; more: boolean }> {
  const pieces: Buffer[] = [];
  let size = 0;
  while (size < limit) {
    const step = await body.next();
    if (step.done) return { head: Buffer.concat(pieces), more: false };
    pieces.push(step.value);
    size += step.value.length;
  }
  return { head: Buffer.concat(pieces), more: true };
}

export async function gather(body: AsyncGenerator<Buffer>): Promise<Buffer[]> {
  const pieces: Buffer[] = [];
  for await (const piece of body) pieces.push(piece);
  return pieces;
}

/** Writes `head` and the rest of the body to stdout as it comes, waiting for stdout to take each piece; JSON ends with a newline. */
export async function pour(io: IO, head: Buffer, rest: AsyncGenerator<Buffer>, json: boolean): Promise<void> {
  let last = head.at(-1);
  if (head.length && !io.out(head)) await io.drain();
  for await (const piece of rest) {
    last = piece.at(-1);
    if (!io.out(piece)) await io.drain();
  }
  if (json && last !== undefined && last !== 10) io.out('\n');
}
