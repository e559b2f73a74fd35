import type { Candidate } from './candidates.js';
import { passOver, type Attempt } from './metadata.js';
import type { RelayOutcome } from './relay.js';

/** A relayed stream's end: broken before its first token, the candidate is passed over (false); else it answered, kept once whole or cut after content (true; charged by the relay before its end went out). Its upstream is let go either way (left at an error event, it generates for nobody). */
export function settled(outcome: RelayOutcome, reply: { events: AsyncIterable<string> }, c: Candidate, passed: Attempt[], remember: () => unknown, kept: (o: Exclude<RelayOutcome, { failed: unknown }>) => void, hide: (text: string) => string): boolean {
  void reply.events[Symbol.asyncIterator]().return?.();
  if ('failed' in outcome) {
    passOver(outcome.failed, c, passed, hide);
    return false;
  }
  remember();
  if (outcome.whole || outcome.cancelled || outcome.broken) kept(outcome);
  return true;
}
