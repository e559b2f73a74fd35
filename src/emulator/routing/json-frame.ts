import { stringEnd } from './hang-up.js';

type Body = Record<string, unknown>;

/**
 * Adds `JSON.stringify(chunk)` to `add`, in pieces, from `data`: the text `chunk` was parsed from, since
 * changed (members given new values, added at its end). A member whose text is already what stringify
 * writes for its value is added as a slice of `data`; only the others are stringified. A stream's first,
 * finish and usage chunks were stringified whole: ~1.5 KB a streamed request to write ~1.5 KB.
 */
export function frameJsonTo(chunk: Body, data: string, add: (text: string) => void): void {
  const pieces = planned(chunk, data);
  if (!pieces) return add(JSON.stringify(chunk));
  for (let i = 0; i < pieces.length; i++) add(pieces[i]!);
  // Let go: a slice holds the whole text it was cut from.
  pieces.length = 0;
}

/** The pieces frameJsonTo adds, reused (a frame is written before the next is planned). */
const PIECES: string[] = [];
/** Where the text not yet in PIECES starts, as a plan goes. */
let from = 0;

/** The pieces of `chunk`'s JSON text from `data`; undefined when its members are not where its text has them. */
function planned(chunk: Body, data: string): string[] | undefined {
  PIECES.length = 0;
  from = 0;
  if (planObject(chunk, data, 0) !== data.length) return undefined;
  PIECES.push(from ? data.slice(from) : data);
  return PIECES;
}

/**
 * Plans the members of `value`, whose text starts at `at`, into PIECES: those the same as the text kept
 * in its slices, an object changed within planned member by member (the usage a price was put in), any
 * other changed one stringified, one added written at its end. Where its text ends; -1 when its members
 * are not where the text has them (a name twice, one removed, names in another order).
 */
function planObject(value: Body, data: string, at: number): number {
  if (typeof value.toJSON === 'function' || data.charCodeAt(at++) !== 123 /* { */) return -1;
  let members = 0;
  for (const key in value) {
    const member = value[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    if (data.charCodeAt(at) === 125 /* } */) {
      if (at > from) PIECES.push(data.slice(from, at));
      PIECES.push(`${members++ ? ',' : ''}${JSON.stringify(key)}:${JSON.stringify(member)}`);
      from = at;
      continue;
    }
    if (members++ && data.charCodeAt(at++) !== 44 /* , */) return -1;
    const colon = sameString(key, data, at);
    if (colon < 0 || data.charCodeAt(colon) !== 58 /* : */) return -1;
    const valueAt = colon + 1;
    const pieces = PIECES.length;
    const was = from;
    at = member && typeof member === 'object' && !Array.isArray(member) ? planObject(member as Body, data, valueAt) : sameJson(member, data, valueAt);
    if (at >= 0) continue;
    // Written anew: what a plan within it had put in PIECES let go.
    PIECES.length = pieces;
    from = was;
    at = jsonEnd(data, valueAt);
    if (at < 0) return -1;
    if (valueAt > from) PIECES.push(data.slice(from, valueAt));
    PIECES.push(JSON.stringify(member));
    from = at;
  }
  return data.charCodeAt(at) === 125 /* } */ ? at + 1 : -1;
}

/**
 * Where the JSON text of `value` that starts at `at` in `data` ends, when it is what JSON.stringify writes
 * for it (no space, the same escapes, numbers as it writes them, members in its order); -1 when it is not
 * known to be.
 */
export function sameJson(value: unknown, data: string, at: number): number {
  switch (typeof value) {
    case 'string':
      return sameString(value, data, at);
    case 'number':
      return sameNumber(value, data, at);
    case 'boolean':
      return value ? (data.startsWith('true', at) ? at + 4 : -1) : data.startsWith('false', at) ? at + 5 : -1;
    case 'object':
      if (value === null) return data.startsWith('null', at) ? at + 4 : -1;
      if (Array.isArray(value)) return sameArray(value, data, at);
      return sameObject(value as Body, data, at);
    default:
      return -1;
  }
}

function sameArray(value: unknown[], data: string, at: number): number {
  if (data.charCodeAt(at++) !== 91 /* [ */) return -1;
  for (let i = 0; i < value.length; i++) {
    if (i && data.charCodeAt(at++) !== 44 /* , */) return -1;
    at = sameJson(value[i], data, at);
    if (at < 0) return -1;
  }
  return data.charCodeAt(at) === 93 /* ] */ ? at + 1 : -1;
}

function sameObject(value: Body, data: string, at: number): number {
  if (typeof value.toJSON === 'function' || data.charCodeAt(at++) !== 123 /* { */) return -1;
  let members = 0;
  for (const key in value) {
    const member = value[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    if (members++ && data.charCodeAt(at++) !== 44 /* , */) return -1;
    at = sameString(key, data, at);
    if (at < 0 || data.charCodeAt(at++) !== 58 /* : */) return -1;
    at = sameJson(member, data, at);
    if (at < 0) return -1;
  }
  return data.charCodeAt(at) === 125 /* } */ ? at + 1 : -1;
}

/** The escape letter stringify writes for a control character, by its code (0: written as \u00XX, not matched here). */
const SHORT_ESCAPES = [0, 0, 0, 0, 0, 0, 0, 0, 98, 116, 110, 0, 102, 114];

/** sameJson() of a string: its characters as they are but `"`, `\` and the short escapes; a pair of surrogates as it is. */
function sameString(value: string, data: string, at: number): number {
  if (data.charCodeAt(at++) !== 34 /* " */) return -1;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 34 || c === 92) {
      if (data.charCodeAt(at) !== 92 || data.charCodeAt(at + 1) !== c) return -1;
      at += 2;
    } else if (c < 32) {
      const letter = SHORT_ESCAPES[c] ?? 0;
      if (!letter || data.charCodeAt(at) !== 92 || data.charCodeAt(at + 1) !== letter) return -1;
      at += 2;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // Written as it is when it is a pair; a lone one stringify escapes.
      const low = value.charCodeAt(i + 1);
      if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff) || data.charCodeAt(at) !== c || data.charCodeAt(at + 1) !== low) return -1;
      i++;
      at += 2;
    } else if (data.charCodeAt(at++) !== c) return -1;
  }
  return data.charCodeAt(at) === 34 ? at + 1 : -1;
}

/**
 * sameJson() of a number: a text with no exponent, no needless zero, at most 15 significant digits and
 * below 1e15, not under 1e-6 (as stringify writes those: any other double of them is further than half
 * a unit of the 15th digit), whose value, the digits over a power of ten (both exact: one rounding), is `value`.
 */
function sameNumber(value: number, data: string, at: number): number {
  const start = at;
  const negative = data.charCodeAt(at) === 45; /* - */
  if (negative) at++;
  let digits = 0;
  let whole = 0;
  let c = data.charCodeAt(at);
  if (c === 48 /* 0 */) at++;
  else
    for (; c >= 48 && c <= 57; c = data.charCodeAt(++at)) {
      whole = whole * 10 + (c - 48);
      digits++;
    }
  if (at === start + (negative ? 1 : 0)) return -1;
  let scale = 1;
  if (data.charCodeAt(at) === 46 /* . */) {
    let zeros = 0;
    let last = 0;
    for (c = data.charCodeAt(++at); c >= 48 && c <= 57; c = data.charCodeAt(++at)) {
      if (!digits && !whole && c === 48) zeros++;
      else digits++;
      whole = whole * 10 + (c - 48);
      scale *= 10;
      last = c;
    }
    if (scale === 1 || last === 48 || zeros > 5) return -1;
  }
  c = data.charCodeAt(at);
  if (c === 101 || c === 69 /* e E */ || digits > 15 || (negative && !whole)) return -1;
  return (negative ? -whole : whole) / scale === value ? at : -1;
}

/** Where the JSON value starting at `at` ends (its text not checked); -1 when it runs past the end. */
function jsonEnd(data: string, at: number): number {
  let depth = 0;
  for (let i = at; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c === 34 /* " */) {
      i = stringEnd(data, i + 1);
      if (i < 0) return -1;
      if (!depth) return i + 1;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      if (!depth) return i;
      if (!--depth) return i + 1;
    } else if (!depth && c === 44 /* , */) return i;
  }
  return -1;
}
