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

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 524, 529]);
/** Statuses with which the server cannot have acted on the request. */
const UNACCEPTED_STATUS = new Set([429, 503]);

/**
 * Whether an error answer is asked again: as the service says in `x-should-retry` (openai-node's header: a
 * gateway that asked every provider already says `false`), else by its status.
 */
export function retriesAnswer(status: number, headers: Record<string, string | string[] | undefined>, policy: string): boolean {
  const said = headers['x-should-retry'];
  const word = (Array.isArray(said) ? said[0] : said)?.trim().toLowerCase();
  if (word === 'true' || word === 'false') return word === 'true';
  return (policy === 'unaccepted' ? UNACCEPTED_STATUS : RETRYABLE_STATUS).has(status);
}
