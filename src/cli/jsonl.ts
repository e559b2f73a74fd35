import { createReadStream } from 'node:fs';

export interface Line {
  /** 1-based line number. */
  number: number;
  /** The line without its end (LF or CRLF) and without a leading BOM. */
  bytes: Buffer;
  /** Byte offset, in the source, just past the line and its end. */
  next: number;
}

/** Reads a file line by line in constant memory (a line is held whole, nothing more). */
export async function* readLines(source: string | AsyncIterable<Buffer>, firstNumber = 1, firstOffset = 0): AsyncGenerator<Line> {
  const input = typeof source === 'string' ? createReadStream(source, { highWaterMark: 256 * 1024 }) : source;
  let carry: Buffer[] = [];
  let number = firstNumber - 1;
  let base = firstOffset;
  const finish = (parts: Buffer[], next: number): Line => {
    let bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (bytes.length && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, -1);
    if (number === 0 && firstOffset === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    number++;
    return { number, bytes, next };
  };
  for await (const chunk of input) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      carry.push(chunk.subarray(start, nl));
      yield finish(carry, base + nl + 1);
      carry = [];
      start = nl + 1;
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
    base += chunk.length;
  }
  if (carry.length && carry.some((c) => c.length)) yield finish(carry, base);
}

export function isBlank(bytes: Buffer): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}
