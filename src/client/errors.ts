import { firstWords } from '../internal/first-words.js';
import { counted } from '../internal/counted.js';
import { hiddenStart, hideSecrets, redactValue, withJsonForms } from '../internal/hide-secrets.js';
import { credentialsOf } from './credentials.js';

/** Base class of every error the client throws. */
export class RouterError extends Error {
  override name = 'RouterError';
  /** What went wrong, to switch on: the service's `error.code` for an `APIError`, else the client's own (each class names its). */
  declare readonly code: number | string | undefined;
  /** How many times the request was retried before this failure was given up on (absent: it was not). */
  retries?: number | undefined;
}

export interface ErrorEnvelope {
  code?: number | string | undefined;
  message?: string | undefined;
  metadata?: Record<string, unknown> & { error_type?: string | undefined } | undefined;
  error_type?: string | undefined;
  type?: string | undefined;
}

/** The service answered with a non-2xx status, or a stream carried an error event. */
export class APIError extends RouterError {
  override name = 'APIError';
  readonly status: number;
  /** `error.code` as sent: the HTTP status for most operations, a string for Responses. */
  readonly code: number | string | undefined;
  /** Canonical error type (`context_length_exceeded`, `rate_limit_exceeded`, ...) when present. */
  readonly errorType: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly body: unknown;
  /** The request that failed (`POST /api/v1/batches`), when the failure is an HTTP answer to one. */
  readonly request: string | undefined;
  /** The failure in the service's own words, without the request and status the message opens with. */
  readonly said: string;

  constructor(
    status: number,
    message: string,
    opts: {
      code?: number | string | undefined;
      errorType?: string | undefined;
      requestId?: string | undefined;
      retryAfterMs?: number | undefined;
      body?: unknown;
      request?: RequestName | undefined;
      /** The credentials the request carried: a server that echoes one has it shown as `****`, in the message and the body. */
      secrets?: readonly string[] | undefined;
    } = {},
  ) {
    const request = opts.request && `${opts.request.method} ${pathOf(opts.request.url)}`;
    if (opts.secrets?.length) message = hideSecrets(message, opts.secrets);
    super(request ? `${request}: ${statusLine(status)}: ${message}` : message);
    this.request = request;
    this.said = message;
    this.status = status;
    this.code = opts.code;
    this.errorType = opts.errorType;
    this.requestId = opts.requestId;
    this.retryAfterMs = opts.retryAfterMs;
    this.body = opts.secrets?.length ? redactValue(opts.body, opts.secrets) : opts.body;
  }

  static fromBody(status: number, body: unknown, requestId?: string, retryAfterMs?: number, request?: RequestName, secrets?: readonly string[]): APIError {
    // The 402 of Get a batch is the batch itself: its `error` is the batch's own, not the answer's.
    if (status === 402 && (body as { object?: unknown } | null)?.object === 'batch') {
      return apiErrorOf(status, 'the finalized cost of the batch exceeds the available balance', { code: status, errorType: 'payment_required', requestId, body, request, secrets });
    }
    const env = (body && typeof body === 'object' ? (body as { error?: ErrorEnvelope }).error : undefined) ?? {};
    const message = typeof env.message === 'string' && env.message ? env.message : `HTTP ${status}`;
    const errorType = env.error_type ?? env.metadata?.error_type ?? (typeof env.code === 'string' ? env.code : undefined);
    return apiErrorOf(status, message, { code: env.code, errorType, requestId, retryAfterMs, body, request, secrets });
  }
}

/** What an `APIError` is made of besides its status and message. */
export type APIErrorOptions = ConstructorParameters<typeof APIError>[2];

/** 400: the request was malformed or its parameters invalid. */
export class BadRequestError extends APIError {
  override name = 'BadRequestError';
}

/** 401: the key is missing, unknown, disabled or expired. */
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError';
}

/** 402: the credits (or the key's limit) do not cover the request. */
export class PaymentRequiredError extends APIError {
  override name = 'PaymentRequiredError';
}

/** 403: the key may not do this (a management key's operation, a moderated input). */
export class PermissionDeniedError extends APIError {
  override name = 'PermissionDeniedError';
}

/** 404: no such model, batch, generation or key, or an API root that is not one. */
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}

/** 429: too many requests; `retryAfterMs` says when to try again, where the service said. */
export class RateLimitError extends APIError {
  override name = 'RateLimitError';
}

/** 500 and above: the service or a provider behind it failed (502, 503, 524, 529, ...). */
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
}

const BY_STATUS: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: PermissionDeniedError,
  404: NotFoundError,
  429: RateLimitError,
};

/** An error answer as the `APIError` of its status's class (a plain `APIError` for a status without one). */
export function apiErrorOf(status: number, message: string, opts: APIErrorOptions = {}): APIError {
  const Class = BY_STATUS[status] ?? (status >= 500 && status <= 599 ? InternalServerError : APIError);
  return new Class(status, message, opts);
}

/** The method and URL of a request an error answers. */
export interface RequestName {
  method: string;
  url: string;
}

/** A URL's path and query (the host is the API root's, named elsewhere when it matters). */
function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return url;
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 402: 'Payment Required', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 409: 'Conflict', 410: 'Gone', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity',
  429: 'Too Many Requests', 500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable',
  504: 'Gateway Timeout', 524: 'Timeout Occurred', 529: 'Overloaded',
};

/** What a body says, less a reason phrase it opens with that the status line says already (`Unprocessable Entity: …`). */
export function afterReason(status: number, said: string): string {
  const reason = REASONS[status];
  if (!reason || !said.startsWith(reason)) return said;
  return said === reason ? '' : said.startsWith(`${reason}: `) ? said.slice(reason.length + 2) : said;
}

/** `404 Not Found`: the status and its reason phrase. */
export function statusLine(status: number): string {
  const reason = REASONS[status];
  return reason ? `${status} ${reason}` : String(status);
}

/** Whether a body is the service's error envelope: `{error: {code, message}}`. */
export function isErrorEnvelope(body: unknown): body is { error: ErrorEnvelope } {
  const error = body && typeof body === 'object' ? (body as { error?: unknown }).error : undefined;
  if (!error || typeof error !== 'object' || Array.isArray(error)) return false;
  const { code, message } = error as ErrorEnvelope;
  return typeof message === 'string' || typeof code === 'number' || typeof code === 'string';
}

/**
 * What a JSON error body that is not the service's says (a proxy's or gateway's): RFC 9457's
 * `title` and `detail` (application/problem+json), else a bare `error` or `message` string.
 */
export function foreignErrorText(body: unknown): string {
  if (!body || typeof body !== 'object') return typeof body === 'string' ? body.slice(0, 200) : '';
  const b = body as Record<string, unknown>;
  const words = (v: unknown) => (typeof v === 'string' ? firstWords(v, 200) : '');
  const title = words(b.title);
  const detail = words(b.detail);
  if (title || detail) return title && detail && title !== detail ? `${title}: ${detail}` : title || detail;
  return words(b.error) || words(b.message);
}

/**
 * What an error answer that is not the service's says (its `parsed` JSON, or undefined): a key of `core`'s the server
 * echoed is hidden before the words are cut, which could leave a piece of it.
 */
export function foreignSaid(core: object, text: string, parsed: unknown): string {
  const shown = hideSecrets(text, withJsonForms(credentialsOf(core)));
  if (parsed === undefined || shown === text) return parsed === undefined ? firstWords(shown, 120) : foreignErrorText(parsed);
  try {
    return foreignErrorText(JSON.parse(shown));
  } catch {
    return firstWords(shown, 120);
  }
}

/** An error delivered inside a stream after it began (chat error chunk, Responses `error`/`response.failed`). */
export class StreamError extends APIError {
  override name = 'StreamError';
}

/**
 * What went wrong below HTTP, for a program to switch on (the system's own code, when there was one, is
 * the `cause`'s): each class's own are listed on it, and in docs/library.md.
 */
export type ConnectionErrorCode =
  | 'refused'
  | 'unreachable'
  | 'connect_timeout'
  | 'failed'
  | 'cut'
  | 'closed'
  | TimeoutError['code']
  | ProxyRefusedError['code']
  | TlsError['code'];

/**
 * No HTTP answer: `refused` (nothing listens there), `unreachable` (no such host, no route),
 * `connect_timeout`, `failed` (reset or closed, a malformed answer), `cut` (a stream ended before it was
 * complete), `closed` (this client's close() was called).
 */
export class ConnectionError extends RouterError {
  override name = 'ConnectionError';
  readonly code: ConnectionErrorCode;
  /** True when the request body may have reached the server (it may have acted on it). */
  readonly maybeDelivered: boolean;
  constructor(message: string, opts: { cause?: unknown; maybeDelivered?: boolean | undefined; code?: ConnectionErrorCode | undefined } = {}) {
    super(message, { cause: opts.cause });
    this.maybeDelivered = opts.maybeDelivered ?? false;
    this.code = opts.code ?? 'failed';
  }
}

/** No answer, or no event of a stream, within the client's `timeoutMs` (`timeout`); a proxy that did not open the way in time (`proxy_timeout`). */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
  declare readonly code: 'timeout' | 'proxy_timeout';
  constructor(message: string, opts: { cause?: unknown; maybeDelivered?: boolean | undefined; code?: TimeoutError['code'] | undefined } = {}) {
    super(message, { ...opts, code: opts.code ?? 'timeout' });
  }
}

/** A proxy that would not open the way to the service (`proxy_refused`): its HTTP status (407: it wants credentials). */
export class ProxyRefusedError extends ConnectionError {
  override name = 'ProxyRefusedError';
  declare readonly code: 'proxy_refused';
  constructor(
    message: string,
    readonly status: number,
    opts: { cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause, maybeDelivered: false, code: 'proxy_refused' });
  }
}

/**
 * The TLS handshake failed: `not_tls` (the server there speaks no TLS), `tls_certificate` (its
 * certificate was not trusted), `tls_handshake` (another failure). Nothing was sent, and a retry meets the same.
 */
export class TlsError extends ConnectionError {
  override name = 'TlsError';
  declare readonly code: 'not_tls' | 'tls_certificate' | 'tls_handshake';
  constructor(message: string, opts: { cause?: unknown; code?: TlsError['code'] | undefined } = {}) {
    super(message, { cause: opts.cause, maybeDelivered: false, code: opts.code ?? 'tls_handshake' });
  }
}

/** The server's answer could not be understood (bad JSON, wrong content type). */
export class ProtocolError extends RouterError {
  override name = 'ProtocolError';
  readonly code = 'invalid_answer';
}

/** A request was refused before sending because its parameters are invalid. */
export class ValidationError extends RouterError {
  override name = 'ValidationError';
  readonly code = 'invalid_request';
}

/** An answer that is no JSON, its start quoted: a key of `core`'s the server echoed in it is not (hidden before the cut, which could leave a piece of it). */
export function malformedJson(core: object, text: string): ProtocolError {
  return new ProtocolError(`server sent malformed JSON (${counted(text.length, 'byte')}): ${hiddenStart(text, credentialsOf(core), 80).slice(0, 80)}`);
}

/** A stream event that is no JSON, its start quoted as malformedJson quotes an answer. */
export function malformedEvent(core: object, data: string): ProtocolError {
  return new ProtocolError(`server sent a malformed stream event: ${hiddenStart(data, credentialsOf(core), 80).slice(0, 80)}`);
}
