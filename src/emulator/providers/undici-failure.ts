// An undici error (refused, not found, timed out, cut) as the provider failure the gateway routes on and says.
import { ProviderFailure } from './types.js';

/** What each of undici's timeouts waited for, said with the setting that bounds it (`timeout_ms`). */
const TIMED_OUT: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'no connection',
  UND_ERR_HEADERS_TIMEOUT: "no answer's head",
  UND_ERR_BODY_TIMEOUT: 'no more of the answer',
};

/** Why undici gave up, in the words of a provider failure; `timeoutMs` (its `timeout_ms`) named in a timeout's. */
export function failureOf(err: unknown, name: string, started: boolean, timeoutMs?: number): ProviderFailure {
  if (err instanceof ProviderFailure) return err;
  const code = (err as { code?: string })?.code ?? '';
  const unreached = new Map([['ECONNREFUSED', 'connection refused'], ['ENOTFOUND', 'host not found'], ['EAI_AGAIN', 'host not found'], ['EHOSTUNREACH', 'host not reachable']]).get(code);
  if (unreached) return new ProviderFailure('refused', `${name}: ${unreached} (${code})`);
  const waited = TIMED_OUT[code];
  if (waited) {
    // A bare "timed out" left the operator guessing which wait, and which setting to raise (a model loading is slow to answer).
    const failure = new ProviderFailure('timeout', timeoutMs === undefined ? `${name}: timed out` : `${name}: timed out: ${waited} within timeout_ms (${timeoutMs} ms)`);
    return code === 'UND_ERR_CONNECT_TIMEOUT' ? Object.assign(failure, { unsent: true }) : failure;
  }
  const what = started ? 'stream broken' : 'connection lost';
  return new ProviderFailure('broken', `${name}: ${what} (${code || (err as Error)?.message || String(err)})`);
}
