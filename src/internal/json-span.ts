/**
 * Where the value of one top-level key lies in the text of a JSON object, found without parsing
 * the rest: a field can be replaced while every other byte stays as it was. The text must be
 * valid JSON (checked before); keys are compared as JSON reads them (escapes decoded).
 */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function skipSpace(text: Uint8Array, i: number): number {
  while (isSpace(text[i])) i++;
  return i;
}

/** The index just past the string that opens at `i`. */
function stringEnd(text: Uint8Array, i: number): number {
  for (let k = i + 1; k < text.length; k++) {
    if (text[k] === BACKSLASH) k++;
    else if (text[k] === QUOTE) return k + 1;
  }
  return text.length;
}

/** The index just past the value that starts at `i`. */
function valueEnd(text: Uint8Array, i: number): number {
  const first = text[i];
  if (first === QUOTE) return stringEnd(text, i);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let k = i; k < text.length; k++) {
      const b = text[k];
      if (b === QUOTE) k = stringEnd(text, k) - 1;
      else if (b === 0x7b || b === 0x5b) depth++;
      else if ((b === 0x7d || b === 0x5d) && --depth === 0) return k + 1;
    }
    return text.length;
  }
  let k = i;
  while (k < text.length && !isSpace(text[k]) && text[k] !== 0x2c && text[k] !== 0x7d && text[k] !== 0x5d) k++;
  return k;
}

/** [start, end) of the value of top-level `key` of the object `text` (the last one, as JSON.parse reads it), or undefined if it has none. */
export function topLevelSpan(text: Buffer, key: string): [number, number] | undefined {
  let i = skipSpace(text, 0);
  if (text[i] !== 0x7b) return undefined;
  i = skipSpace(text, i + 1);
  let found: [number, number] | undefined;
  while (text[i] === QUOTE) {
    const keyEnd = stringEnd(text, i);
    const name = JSON.parse(text.toString('utf8', i, keyEnd)) as string;
    const start = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = valueEnd(text, start);
    if (name === key) found = [start, end];
    i = skipSpace(text, end);
    if (text[i] !== 0x2c) break;
    i = skipSpace(text, i + 1);
  }
  return found;
}

/** A top-level string member of JSON bytes that may be cut short: undefined unless its value came whole. */
export function topLevelString(bytes: Buffer, key: string): string | undefined {
  try {
    const span = topLevelSpan(bytes, key);
    const value: unknown = span && JSON.parse(bytes.toString('utf8', span[0], span[1]));
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
