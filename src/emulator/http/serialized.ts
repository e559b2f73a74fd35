/** An event already in JSON: written as it is (the many text deltas of a stream are not stringified one by one). */
export class Serialized {
  constructor(
    readonly json: string,
    /** The SSE `event:` name, when the stream names its events. */
    readonly name?: string,
  ) {}
}

/** Characters JSON.stringify escapes in a string (controls, quote, backslash, lone surrogates). */
const ESCAPED = /[\u0000-\u001f"\\\ud800-\udfff]/;

/** JSON.stringify(value), without its call for the plain strings and finite numbers most values are. */
function jsonValue(value: unknown): string {
  if (typeof value === 'string') return ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`;
  if (typeof value === 'number' && Number.isFinite(value)) return `${value}`;
  return JSON.stringify(value);
}

const hole = (i: number) => `\u0000hole${i}\u0000`;

/**
 * The JSON of `shape(holes)` with its holes filled in by position: the same text as JSON.stringify
 * of the object holding those values, at the cost of stringifying only the values.
 */
export function jsonTemplate(shape: (...holes: string[]) => object, holes: number): (...values: unknown[]) => string {
  let rest = JSON.stringify(shape(...Array.from({ length: holes }, (_, i) => hole(i))));
  const parts: string[] = [];
  for (let i = 0; i < holes; i++) {
    const marker = JSON.stringify(hole(i));
    const at = rest.indexOf(marker);
    if (at < 0) throw new Error(`jsonTemplate: value ${i} is not in the shape once, in order`);
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + marker.length);
  }
  parts.push(rest);
  return (...values) => {
    let out = parts[0]!;
    for (let i = 0; i < holes; i++) out += jsonValue(values[i]) + parts[i + 1]!;
    return out;
  };
}
