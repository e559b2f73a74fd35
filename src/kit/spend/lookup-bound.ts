/**
 * A lookup of what was charged (a generation, a key, a key's spend), given up the client's timeoutMs
 * (--timeout) after it starts, retries included: a service that never answers holds `usage
 * --reconcile` that long, not a timeout for each try (120 s, three times).
 */
import type { RouterClient } from '../../client/index.js';
import { TimeoutError } from '../../client/errors.js';
import { withinMs } from '../../internal/abort-fanout.js';

export async function lookupWithin<T>(client: RouterClient, signal: AbortSignal, what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ms = client.core.timeoutMs;
  try {
    return await withinMs(signal, ms, work);
  } catch (err) {
    if (signal.aborted || (err as Error | undefined)?.name !== 'TimeoutError' || err instanceof TimeoutError) throw err;
    throw new TimeoutError(`no answer to ${what} within ${Number((ms / 1000).toFixed(3))}s (--timeout), retries included`, { cause: err });
  }
}
