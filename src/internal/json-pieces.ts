/**
 * JSON text as JSON.stringify gives it, made a piece at a time: a string longer than LONG_STRING (a 20 MB
 * prompt) is escaped a slice at a time, so that neither the whole JSON text nor its bytes are held at once
 * (V8, building one, holds more). Plain objects and arrays are walked as `jsonByteLength` walks them to count
 * the same bytes; any other value is stringified whole.
 */
import { writeSync } from 'node:fs';
import { isPlain, jsonByteLength, LONG_STRING, stringSlices } from './json-byte-length.js';

/** Pieces are gathered up to this many characters before they are written or made bytes. */
const PIECE = 1 << 15;

/** Writes `value`'s JSON and a newline to `fd` (a conversation's line), in pieces. */
export function writeJsonLine(fd: number, value: unknown): void {
  // The newline goes with the last piece: a short line is one write, whole among others appended at once.
  for (const piece of gathered(jsonTexts(value, false), '\n')) writeSync(fd, piece);
}

/** `value`'s JSON as UTF-8 bytes in pieces, made as they are read (a request's body while it is sent). */
export function* jsonPieces(value: unknown): Generator<Buffer> {
  for (const piece of gathered(jsonTexts(value, false))) yield Buffer.from(piece);
}

/** Small texts joined up to PIECE characters, a long one given as it is; `end` ends the last. */
function* gathered(texts: Iterable<string>, end = ''): Generator<string> {
  let pending = '';
  for (const text of texts) {
    if (text.length >= PIECE) {
      if (pending) yield pending;
      pending = '';
      yield text;
      continue;
    }
    pending += text;
    if (pending.length >= PIECE) {
      yield pending;
      pending = '';
    }
  }
  if (pending || end) yield pending + end;
}

/**
 * A request's JSON body: its bytes, or for one holding a string over LONG_STRING (a large prompt) pieces made as
 * they are sent, and their length (its JSON text and that text's bytes at once were 2-3 copies of a 50 MB prompt).
 */
export function jsonBody(value: unknown): { bytes: Buffer | Iterable<Buffer>; length?: number } {
  if (!holdsLongString(value)) return { bytes: Buffer.from(JSON.stringify(value)) };
  return { bytes: jsonPieces(value), length: jsonByteLength(value) };
}

/** Whether a value holds a string long enough to be worth sending in pieces (a prompt of a megabyte or more). */
export function holdsLongString(value: unknown): boolean {
  if (typeof value === 'string') return value.length > LONG_STRING;
  if (value === null || typeof value !== 'object' || !isPlain(value)) return false;
  return (Array.isArray(value) ? value : Object.values(value)).some(holdsLongString);
}

function* jsonTexts(value: unknown, inArray: boolean): Generator<string> {
  if (typeof value === 'string') {
    if (value.length <= LONG_STRING) yield JSON.stringify(value);
    else {
      yield '"';
      // Slices small enough for V8's young space: garbage a scavenge takes back, not large objects kept to a full collection.
      for (const slice of stringSlices(value, PIECE)) yield JSON.stringify(slice).slice(1, -1);
      yield '"';
    }
    return;
  }
  if (value === null || typeof value !== 'object' || !isPlain(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    const json = JSON.stringify(value) as string | undefined;
    yield json ?? (inArray ? 'null' : '');
    return;
  }
  if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i++) {
      if (i) yield ',';
      yield* jsonTexts(value[i], true);
    }
    yield ']';
    return;
  }
  yield '{';
  let first = true;
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(k)}:`;
    yield* jsonTexts(v, false);
    first = false;
  }
  yield '}';
}
