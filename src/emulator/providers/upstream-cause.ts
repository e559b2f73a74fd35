/**
 * An upstream's failure as one canonical cause (`error_type`): a stream's break, a status it answered, an
 * error a whole answer carried. One reading for all of them, so a caller (a stream, a whole answer, a batch
 * result line, a replay) hears the same cause of the same upstream words.
 */
import { errorTypeFor } from '../http/http.js';
import { isRecord } from '../../internal/shape.js';

/** The causes a failure keeps (any other is the provider failing: `provider_unavailable`). */
export const KEPT_CAUSES: ReadonlySet<string> = new Set(['rate_limit_exceeded', 'provider_overloaded', 'timeout']);

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

/** The first kept cause `error` names (metadata's `error_type`, its `error_type`, `code`, `type`, `status`), if any. */
function keptCause(error: unknown): string | undefined {
  const e = isRecord(error) ? error : {};
  const fields = [isRecord(e.metadata) ? e.metadata.error_type : undefined, e.error_type, e.code, e.type, e.status];
  return fields.map(causeOf).find((c): c is string => c !== undefined && KEPT_CAUSES.has(c));
}

/** What an upstream's error (a mid-stream error chunk's, an error body's) names: its canonical cause. */
export function upstreamCause(error: unknown): string {
  return keptCause(error) ?? 'provider_unavailable';
}

/**
 * What an upstream's error answer names: the cause its body's `error` says (Anthropic's and OpenAI's
 * `{error: {…}}`), else its status's own (429, 524, 529), else the provider failing.
 */
export function answeredCause(status: number, text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const said = isRecord(body) ? keptCause(isRecord(body.error) ? body.error : body) : undefined;
  return said ?? (KEPT_CAUSES.has(errorTypeFor(status)) ? errorTypeFor(status) : 'provider_unavailable');
}

/** The cause of an answer of `status` that says nothing more (a `provider=` fault's: routing/provider-fault.ts, fake-route.ts). */
export const statusCause = (status: number): string => answeredCause(status, '');
