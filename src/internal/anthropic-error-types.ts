/**
 * Anthropic's error types and the HTTP statuses they come with: the emulator names a `/v1/messages`
 * error's type by its status, `router api` reads a streamed `error` event's type back as a status.
 * One table, both directions.
 */
const STATUSES_BY_TYPE: Record<string, readonly number[]> = {
  invalid_request_error: [400],
  authentication_error: [401],
  billing_error: [402],
  permission_error: [403],
  not_found_error: [404],
  request_too_large: [413],
  rate_limit_error: [429],
  // A stream's break (api_error) is a 502, as the service's.
  api_error: [502, 500],
  timeout_error: [504, 408, 524],
  overloaded_error: [529, 503],
};

/**
 * Read, never said: the OpenAPI's AnthropicMessagesErrorResponse (the service's list of types) has no
 * `request_too_large`, so a 413 is said as any other 4xx.
 */
const READ_ONLY = new Set(['request_too_large']);

const TYPE_BY_STATUS = new Map(Object.entries(STATUSES_BY_TYPE).flatMap(([type, statuses]) => (READ_ONLY.has(type) ? [] : statuses.map((s) => [s, type] as const))));

/** The status an Anthropic error type is answered with (an unknown type: a 502, the provider failing). */
export const anthropicErrorStatus = (type: string): number => STATUSES_BY_TYPE[type]?.[0] ?? 502;

/** The Anthropic error type of a status: its own, else any other 4xx `invalid_request_error` and 5xx `api_error`. */
export const anthropicErrorType = (status: number): string => TYPE_BY_STATUS.get(status) ?? (status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error');
