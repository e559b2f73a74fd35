import { ProviderFailure } from '../providers/types.js';

/**
 * Whether a provider's failure says it never began the request: refused (or a connect that timed out), a
 * status it answered instead (429, 5xx, ...), a fake model unavailable, a replay's miss. A timeout once sent,
 * a cut after the answer's head, an answer that came but was no answer: the provider may have generated
 * (and billed) it, so a batch does not ask that provider again (gateway.ts complete()).
 */
export function knownUnstarted(err: unknown): boolean {
  if (!(err instanceof ProviderFailure)) return false;
  return err.unsent || err.reason === 'refused' || err.reason === 'status' || err.reason === 'unavailable' || err.reason === 'missing';
}
