/**
 * An error as `/v1/messages` says it, wherever it is said (a whole answer, a stream's `error` event, a
 * failed batch item): the OpenAPI's AnthropicMessagesErrorResponse, `{type: 'error', error: {type, message}}`.
 */
import { errorBody } from '../http/http.js';
import { anthropicErrorType } from '../../internal/anthropic-error-types.js';

type Body = Record<string, unknown>;

/** A cause (the canonical `error_type`) that names Anthropic's type whatever the status it came with (a stream's break is always a 502). */
const BY_CAUSE: Record<string, string> = { provider_overloaded: 'overloaded_error', timeout: 'timeout_error', rate_limit_exceeded: 'rate_limit_error' };

export function messagesErrorType(status: number, cause?: unknown): string {
  const byCause = typeof cause === 'string' ? BY_CAUSE[cause] : undefined;
  return byCause ?? anthropicErrorType(status);
}

/** The `error` object of a messages error: its type, its message, the canonical cause beside them. */
export function messagesErrorOf(status: number, message: string, cause?: unknown): Body {
  return { type: messagesErrorType(status, cause), message, ...(typeof cause === 'string' && cause ? { error_type: cause } : {}) };
}

/**
 * Chat's error (`{code, message, metadata: {error_type}}`, as a body's or a stream chunk's `error`) as a
 * messages error object: of the answer's `status`, or (a stream's, sent under a 200) of the error's code.
 */
export function messagesErrorFromChat(error: unknown, status?: number): Body {
  const e = (error && typeof error === 'object' ? error : {}) as Body;
  const code = status ?? (typeof e.code === 'number' && e.code >= 400 && e.code < 600 ? e.code : 502);
  return messagesErrorOf(code, String(e.message ?? `HTTP ${code}`), (e.metadata as Body | undefined)?.error_type);
}

/** The body a failed request of `endpoint` answers with: the messages error for `/v1/messages`, chat's envelope for the rest. */
export function errorBodyFor(endpoint: string, status: number, message: string, errorType: string, requestId: string): Body {
  if (endpoint !== '/v1/messages') return errorBody(status, message, errorType);
  return { type: 'error', error: messagesErrorOf(status, message, errorType), request_id: requestId };
}
