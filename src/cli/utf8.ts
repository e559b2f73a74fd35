import { usage } from './exit-codes.js';

// Made on first use: a strict decoder costs ~0.5 ms, and most calls read no file.
let strict: TextDecoder | undefined;

/**
 * Text read from a file or stdin. Bytes that are not UTF-8 (a UTF-16 export, an image piped in by
 * mistake) would reach the service as replacement characters: they are refused, naming the input.
 * A UTF-8 byte-order mark is dropped.
 */
export function utf8Text(bytes: Uint8Array, what: string): string {
  try {
    return (strict ??= new TextDecoder('utf-8', { fatal: true })).decode(bytes);
  } catch {
    const utf16 = bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
    throw usage(`${what} is not UTF-8 text${utf16 ? ' (it is UTF-16: convert it with iconv -f UTF-16 -t UTF-8)' : ''}`);
  }
}
