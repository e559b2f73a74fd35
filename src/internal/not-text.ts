import { isUtf8 } from 'node:buffer';

/**
 * Why bytes read as text are not UTF-8 text, in words a user acts on, or undefined when they are. A NUL byte is
 * valid UTF-8 but no text has one: binary data (an image, a PDF), or UTF-16 (PowerShell's `>`, Notepad's
 * "Unicode"), which has one every other byte. One reason for the whole input: every reader of a file or stdin
 * says the same.
 */
export function notTextReason(bytes: Uint8Array): string | undefined {
  const nul = bytes.indexOf(0);
  if (nul !== -1) return looksUtf16(bytes) || zeroEveryOtherByte(bytes) ? UTF16 : `it holds a NUL byte at offset ${nul}: binary data, not text`;
  if (isUtf8(bytes)) return undefined;
  if (looksUtf16(bytes)) return UTF16;
  const at = firstInvalid(bytes);
  return `byte 0x${bytes[at]!.toString(16).toUpperCase().padStart(2, '0')} at offset ${at}: text in another encoding converts with iconv, e.g. iconv -f LATIN1 -t UTF-8`;
}

/** The text of bytes notTextReason() took, without a UTF-8 byte-order mark. */
export function decodeText(bytes: Uint8Array): string {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return Buffer.from(bytes.buffer, bytes.byteOffset + bom, bytes.byteLength - bom).toString('utf8');
}

export const looksUtf16 = (bytes: Uint8Array) => bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));

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

const UTF16 = 'it is UTF-16: convert it with iconv -f UTF-16 -t UTF-8';

// Made on first use: a strict decoder costs ~0.5 ms, and only bytes found not UTF-8 need one.
let strict: TextDecoder | undefined;

/** The offset of the first byte that starts no valid UTF-8 sequence (the strict decoder said there is one). */
function firstInvalid(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return i;
    try {
      (strict ??= new TextDecoder('utf-8', { fatal: true })).decode(bytes.subarray(i, i + n));
    } catch {
      return i;
    }
    i += n;
  }
  return 0;
}
