/**
 * One pass over JSON bytes before they are parsed: how deep they nest, and how many entries the
 * values of some top-level members hold. A body that its parse would only lead to refusing (a
 * million keys where sixteen are allowed) is refused without the parse, which would cost seconds
 * and gigabytes. Not a validator: bytes that are not JSON are left to JSON.parse to refuse.
 */
export interface ScanLimits {
  maxDepth: number;
  /** Top-level member name → the most entries (keys of an object, elements of an array) its value may hold. */
  entries?: Record<string, { max: number; of: 'object' | 'array' }>;
}

export type ScanVerdict = { tooDeep: true } | { member: string; max: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The index of the quote that closes the string whose content starts at `from`, or -1. */
function stringEnd(bytes: Buffer, from: number): number {
  for (let at = bytes.indexOf(QUOTE, from); at !== -1; at = bytes.indexOf(QUOTE, at + 1)) {
    let slashes = 0;
    while (bytes[at - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at;
  }
  return -1;
}

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** The first limit the bytes break, found as early as the bytes allow; undefined when none. */
export function scanJson(bytes: Buffer, limits: ScanLimits): ScanVerdict | undefined {
  const entries = limits.entries ?? {};
  let depth = 0;
  /** At depth 1: the next string is a member name. */
  let expectName = false;
  let name = '';
  /** A limited member's value is open (at depth 2): its entries so far, from its commas. */
  let counted: { member: string; max: number; commas: number } | undefined;
  let valueOf: string | undefined;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (isSpace(b)) continue;
    if (valueOf !== undefined) {
      // The first byte of a top-level member's value.
      const limit = entries[valueOf];
      if (limit && b === (limit.of === 'object' ? 0x7b : 0x5b)) counted = { member: valueOf, max: limit.max, commas: 0 };
      valueOf = undefined;
    }
    if (b === QUOTE) {
      const end = stringEnd(bytes, i + 1);
      if (end === -1) return undefined;
      if (depth === 1 && expectName) {
        name = end - i - 1 <= 64 ? bytes.toString('latin1', i + 1, end) : '';
        expectName = false;
      }
      i = end;
    } else if (b === 0x7b || b === 0x5b) {
      if (++depth > limits.maxDepth) return { tooDeep: true };
      if (depth === 1) expectName = b === 0x7b;
    } else if (b === 0x7d || b === 0x5d) {
      depth--;
      if (counted && depth === 1) counted = undefined;
    } else if (b === COMMA) {
      if (depth === 1) expectName = true;
      else if (counted && depth === 2 && ++counted.commas + 1 > counted.max) return { member: counted.member, max: counted.max };
    } else if (b === COLON && depth === 1) {
      if (Object.hasOwn(entries, name)) valueOf = name;
    }
  }
  return undefined;
}
