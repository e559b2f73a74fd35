/**
 * A request's `provider=` status fault (`503,provider=openai`, http/faults.ts) over the gateway's providers:
 * the provider it names is not asked and is taken to have answered that status, as its upstream would have.
 */
import { HttpError } from '../http/http.js';
import type { FaultRule } from '../http/faults.js';
import { ProviderFailure, passesOver } from '../providers/types.js';
import { statusCause } from '../providers/upstream-cause.js';
import type { Candidate } from './candidates.js';

/**
 * The answer of a candidate a fault names instead of its adapter's: a status the gateway passes over (a 429, a
 * 5xx: passesOver) is that provider's failure, with the fault's `Retry-After`, and the next candidate is asked;
 * any other (a 400) is the caller's, as an upstream's refusal is. Undefined when the fault names another provider.
 * The failure's cause is its status's, as an upstream's answer of that status has it (a 529 overloaded, a 524 a timeout).
 */
export function faulted(fault: FaultRule | undefined, c: Candidate): Promise<never> | undefined {
  // parseFault gives `provider` to a status fault only.
  if (fault?.provider !== c.slug) return undefined;
  const status = fault.status!;
  const words = `${c.slug}: Injected fault: HTTP ${status}`;
  if (!passesOver(status)) return Promise.reject(new HttpError(status, words));
  const failure = new ProviderFailure('status', words, status, fault.retryAfter);
  const cause = statusCause(status);
  if (cause !== 'provider_unavailable') failure.errorType = cause;
  return Promise.reject(failure);
}
