import { decodeText, notTextReason } from '../../internal/not-text.js';
import { usage } from '../exit-codes.js';

/**
 * Text read from a file or stdin. Bytes that are not UTF-8 (a UTF-16 export, an image piped in by
 * mistake) would reach the service as replacement characters: they are refused, naming the input.
 * A UTF-8 byte-order mark is dropped. Checked with isUtf8 and decoded once: a strict TextDecoder
 * held a second copy of the bytes while it decoded (a 50 MB prompt, 50 MB more).
 */
export function utf8Text(bytes: Uint8Array, what: string): string {
  const why = notTextReason(bytes);
  if (why) throw usage(`${what} is not UTF-8 text (${why})`);
  return decodeText(bytes);
}
