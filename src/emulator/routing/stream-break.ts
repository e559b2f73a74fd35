import { ProviderFailure, failureCause } from '../providers/types.js';

/** Why a stream broke after its first content: its words, and the canonical cause the caller's error chunk says (`error_type`). */
export interface StreamBreak {
  words: string;
  cause: string;
}

/**
 * A break as a Responses stream's `response.failed` says it: the code its enum has for the cause
 * (`rate_limit_exceeded`, else `server_error`), the canonical cause beside it as chat's error chunk says it.
 */
export const responsesBreakError = (broken: StreamBreak) => ({
  code: broken.cause === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error',
  message: `Provider returned an error mid-stream: ${broken.words}`,
  error_type: broken.cause,
});

/** A failure reading the stream (a stall past idle_timeout_ms is a `timeout`). */
export const failureBreak = (failure: ProviderFailure): StreamBreak => ({ words: failure.message, cause: failureCause(failure) });

/** What pump() caught: a provider failure as it is, anything else an event it could not use. */
export const caughtFailure = (err: unknown, slug: string): ProviderFailure => (err instanceof ProviderFailure ? err : new ProviderFailure('broken', `${slug}: a stream event that is not a JSON object`));
