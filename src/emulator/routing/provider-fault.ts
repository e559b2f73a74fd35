/**
 * A request's `provider=` status fault (`503,provider=openai`, http/faults.ts) over a provider, a gateway's or a fake
 * model's: the provider it names is not asked and is taken to have answered that status, as its upstream would have.
 * One place makes its words and cause for both (faulted here, fake-route.ts's attempts), so they cannot drift.
 */
import { HttpError } from '../http/http.js';
import type { FaultRule } from '../http/faults.js';
import { ProviderFailure, passesOver } from '../providers/types.js';
import { statusCause } from '../providers/upstream-cause.js';

/** A provider's failure a fault made: its words, status, cause and `Retry-After`. */
export interface ProviderFault {
  words: string;
  status: number;
  cause: string;
  retryAfter?: string;
}

/**
 * The failure of provider `slug` a fault names, else undefined (it names another, or is no status fault). A status the
 * gateway passes over on (passesOver: a 429, a 5xx, 401–404, 408) is a failure and the next provider is asked; any other
 * (a 400) is the request's own fault, which no other provider would answer otherwise: it is thrown as the caller's
 * HttpError, as an upstream's refusal is (the OpenAPI's `allow_fallbacks`: a backup serves when a provider is
 * unavailable, not when the request is wrong). The cause is its status's, as an upstream's answer of that status has it
 * (a 529 overloaded, a 524 a timeout).
 */
export function providerFault(fault: FaultRule | undefined, slug: string): ProviderFault | undefined {
  if (fault?.kind !== 'status' || fault.provider !== slug) return undefined;
  const status = fault.status!;
  const words = `${slug}: Injected fault: HTTP ${status}`;
  if (!passesOver(status)) throw new HttpError(status, words);
  return { words, status, cause: statusCause(status), ...(fault.retryAfter !== undefined && { retryAfter: fault.retryAfter }) };
}

/** The answer of a gateway's candidate a fault names instead of its adapter's (providerFault, as a ProviderFailure). */
export function faulted(fault: FaultRule | undefined, c: { slug: string }): Promise<never> | undefined {
  let made: ProviderFault | undefined;
  try {
    made = providerFault(fault, c.slug);
  } catch (err) {
    return Promise.reject(err as Error);
  }
  if (!made) return undefined;
  const failure = new ProviderFailure('status', made.words, made.status, made.retryAfter);
  if (made.cause !== 'provider_unavailable') failure.errorType = made.cause;
  return Promise.reject(failure);
}
