import { errorTypeFor } from '../http/http.js';
import { ProviderFailure } from '../providers/types.js';
import { isRecord } from '../../internal/shape.js';

/** Why a stream broke after its first content: its words, and the canonical cause the caller's error chunk says (`error_type`). */
export interface StreamBreak {
  words: string;
  cause: string;
}

/** The causes a break keeps (any other is the provider failing: `provider_unavailable`). */
const KEPT = new Set(['rate_limit_exceeded', 'provider_overloaded', 'timeout']);

/**
 * A cause as real upstreams say it in words, lower-cased: Anthropic's error `type` (`overloaded_error`,
 * `rate_limit_error`, `timeout_error`), OpenAI's and Groq's `code`/`type` (`rate_limit_exceeded`; an old
 * `engine_overloaded`), Google's `status` (`RESOURCE_EXHAUSTED`, `DEADLINE_EXCEEDED`), besides the
 * canonical names themselves. Any other (`server_error`, `api_error`, llama.cpp's `unavailable_error`,
 * vLLM's `InternalServerError`) is the provider failing.
 */
const SAID: Record<string, string> = {
  rate_limit_exceeded: 'rate_limit_exceeded',
  rate_limit_error: 'rate_limit_exceeded',
  rate_limited: 'rate_limit_exceeded',
  too_many_requests: 'rate_limit_exceeded',
  resource_exhausted: 'rate_limit_exceeded',
  provider_overloaded: 'provider_overloaded',
  overloaded_error: 'provider_overloaded',
  overloaded: 'provider_overloaded',
  engine_overloaded: 'provider_overloaded',
  timeout: 'timeout',
  timeout_error: 'timeout',
  deadline_exceeded: 'timeout',
};

/** One field's cause: a canonical or provider's name, or an HTTP status (a number or its digits, "429"). */
function causeOf(field: unknown): string | undefined {
  if (typeof field === 'number') return errorTypeFor(field);
  if (typeof field !== 'string') return undefined;
  return /^\d{3}$/.test(field) ? errorTypeFor(Number(field)) : SAID[field.toLowerCase()];
}

/**
 * What an upstream's mid-stream error names: its canonical cause, from the first of metadata's
 * `error_type`, its `code`, `type` or `status` that names one kept.
 */
export function upstreamCause(error: unknown): string {
  const e = isRecord(error) ? error : {};
  const fields = [isRecord(e.metadata) ? e.metadata.error_type : undefined, e.error_type, e.code, e.type, e.status];
  return fields.map(causeOf).find((c): c is string => c !== undefined && KEPT.has(c)) ?? 'provider_unavailable';
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
export const failureBreak = (failure: ProviderFailure): StreamBreak => ({ words: failure.message, cause: failure.reason === 'timeout' ? 'timeout' : 'provider_unavailable' });

/** What pump() caught: a provider failure as it is, anything else an event it could not use. */
export const caughtFailure = (err: unknown, slug: string): ProviderFailure => (err instanceof ProviderFailure ? err : new ProviderFailure('broken', `${slug}: a stream event that is not a JSON object`));
