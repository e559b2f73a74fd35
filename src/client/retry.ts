/** How long to wait before a retry: the service's Retry-After, else capped exponential backoff with jitter. */

const MAX_BACKOFF_MS = 8_000;
/** The longest Retry-After a retry waits for (and never longer than the request timeout). */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Parses `Retry-After` (delta seconds or an HTTP date) into milliseconds from now. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.round(Number(v) * 1000);
  const date = Date.parse(v);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

export function backoffDelay(attempt: number, retryAfterMs: number | undefined, random = Math.random): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  const ceiling = Math.min(MAX_BACKOFF_MS, 500 * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
