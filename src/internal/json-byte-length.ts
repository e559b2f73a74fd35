/** Strings longer than this are measured (and written, json-pieces.ts) a slice at a time, or whole when nothing in them is escaped. */
export const LONG_STRING = 1 << 20;
/** What JSON escapes, or writes other than as its UTF-8 (a lone surrogate). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Objects JSON walks as they are: not a class's instance (a Date, a Map) that has its own way. */
export const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null || proto === Array.prototype;
};

/** A long string in slices of about `size` characters, never cut between the two halves of a surrogate pair (each alone would be escaped). */
export function* stringSlices(s: string, size = LONG_STRING): Generator<string> {
  for (let i = 0; i < s.length; ) {
    let end = Math.min(i + size, s.length);
    const last = s.charCodeAt(end - 1);
    if (end < s.length && last >= 0xd800 && last <= 0xdbff) end++;
    yield s.slice(i, end);
    i = end;
  }
}

function stringBytes(s: string): number {
  if (s.length <= LONG_STRING) return Buffer.byteLength(JSON.stringify(s));
  if (!ESCAPED.test(s)) return Buffer.byteLength(s) + 2;
  let n = 2;
  for (const slice of stringSlices(s)) n += Buffer.byteLength(JSON.stringify(slice)) - 2;
  return n;
}

/**
 * `Buffer.byteLength(JSON.stringify(value) ?? '')`, counted without making the JSON text: the text of a body with a
 * 20 MB prompt is 20 MB more held at once. Plain objects and arrays are walked; any other value is stringified.
 */
export function jsonByteLength(value: unknown, inArray = false): number {
  if (typeof value === 'string') return stringBytes(value);
  if (value === null || typeof value !== 'object' || !isPlain(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    const json = JSON.stringify(value) as string | undefined;
    return json === undefined ? (inArray ? 4 : 0) : Buffer.byteLength(json);
  }
  if (Array.isArray(value)) return value.reduce<number>((n, v, i) => n + (i ? 1 : 0) + jsonByteLength(v, true), 2);
  let n = 2;
  let first = true;
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    n += (first ? 0 : 1) + stringBytes(k) + 1 + jsonByteLength(v);
    first = false;
  }
  return n;
}
