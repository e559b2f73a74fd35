import { usage } from '../exit-codes.js';

// Made on first use: a strict decoder costs ~0.5 ms, and most calls read no file.
let strict: TextDecoder | undefined;

/**
 * Text read from a file or stdin. Bytes that are not UTF-8 (a UTF-16 export, an image piped in by
 * mistake) would reach the service as replacement characters: they are refused, naming the input.
 * A UTF-8 byte-order mark is dropped.
 */
export function utf8Text(bytes: Uint8Array, what: string): string {
  // A NUL byte is valid UTF-8 but no text has one: UTF-16 without a byte-order mark has one every other byte.
  const nul = bytes.indexOf(0);
  if (nul !== -1) throw notUtf8(what, looksUtf16(bytes) || zeroEveryOtherByte(bytes));
  try {
    return (strict ??= new TextDecoder('utf-8', { fatal: true })).decode(bytes);
  } catch {
    throw notUtf8(what, looksUtf16(bytes));
  }
}

const looksUtf16 = (bytes: Uint8Array) => bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));

/** ASCII text in UTF-16 (LE or BE) without a byte-order mark: a zero at every other byte of its start. */
function zeroEveryOtherByte(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 64) & ~1;
  let even = n >= 4;
  let odd = n >= 4;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] !== 0) even = false;
    if (bytes[i + 1] !== 0) odd = false;
  }
  return even || odd;
}

const notUtf8 = (what: string, utf16: boolean) => usage(`${what} is not UTF-8 text${utf16 ? ' (it is UTF-16: convert it with iconv -f UTF-16 -t UTF-8)' : ''}`);
