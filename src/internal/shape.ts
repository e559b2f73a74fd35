/** A plain JSON object (not null, not an array): what a record read from a file must be. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

export function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/**
 * A value a program gave where a number or a setting goes, as every error of the library, the batch engine and the client
 * names it: a string quoted (`"5"`, not 5), an array, an object or a function by kind (not its source), else as written (null, 12, true).
 */
export function shownGiven(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'bigint') return `${v}n`;
  return typeof v === 'object' && v !== null ? 'an object' : String(v);
}
