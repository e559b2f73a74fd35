import { writeSync } from 'node:fs';

/** How many characters are escaped and written at a time. */
const PIECE = 1 << 20;

const isPlain = (v: object) => {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null || proto === Array.prototype;
};

/**
 * Writes `value`'s JSON and a newline to `fd`, the bytes JSON.stringify would give, in pieces of about PIECE characters:
 * a string longer than that (a 20 MB prompt) is escaped a slice at a time, so that neither the whole JSON text nor its
 * bytes are held at once. Plain objects and arrays are walked; any other value is stringified as JSON.stringify would.
 */
export function writeJsonLine(fd: number, value: unknown): void {
  let held = '';
  const put = (text: string) => {
    held += text;
    if (held.length < PIECE) return;
    writeSync(fd, held);
    held = '';
  };
  const walk = (v: unknown, inArray: boolean): void => {
    if (typeof v === 'string' && v.length > PIECE) {
      put('"');
      for (let i = 0; i < v.length; ) {
        let end = Math.min(i + PIECE, v.length);
        // Never between the two halves of a surrogate pair: each half alone would be escaped.
        const last = v.charCodeAt(end - 1);
        if (end < v.length && last >= 0xd800 && last <= 0xdbff) end++;
        put(JSON.stringify(v.slice(i, end)).slice(1, -1));
        i = end;
      }
      put('"');
    } else if (v !== null && typeof v === 'object' && isPlain(v) && typeof (v as { toJSON?: unknown }).toJSON !== 'function') {
      const array = Array.isArray(v);
      put(array ? '[' : '{');
      let first = true;
      for (const [k, item] of Object.entries(v)) {
        const none = item === undefined || typeof item === 'function' || typeof item === 'symbol';
        if (none && !array) continue;
        put(`${first ? '' : ','}${array ? '' : `${JSON.stringify(k)}:`}`);
        first = false;
        walk(item, array);
      }
      put(array ? ']' : '}');
    } else put((JSON.stringify(v) as string | undefined) ?? (inArray ? 'null' : ''));
  };
  walk(value, false);
  put('\n');
  if (held) writeSync(fd, held);
}
