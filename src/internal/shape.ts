/** A plain JSON object (not null, not an array): what a record read from a file must be. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

export function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** A value a program gave where a number or a setting goes, as an error names it: a string quoted (`"5"`, not 5), an array or object by kind. */
export function shownGiven(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : Array.isArray(v) ? 'an array' : typeof v === 'object' && v !== null ? 'an object' : String(v);
}
