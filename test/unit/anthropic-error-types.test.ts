import { describe, expect, it } from 'vitest';
import { anthropicErrorStatus, anthropicErrorType } from '../../src/internal/anthropic-error-types.js';
import { messagesErrorType } from '../../src/emulator/resources/messages-errors.js';

// One table of Anthropic's error types and statuses (src/internal/), read both ways: the emulator names a
// `/v1/messages` error's type by its status, `router api` reads a streamed error event's type back as a
// status (the CLI may not import the emulator). Before, each kept a table of its own, one the other's reverse.
const SAID = ['invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error', 'rate_limit_error', 'api_error', 'timeout_error', 'overloaded_error'];

describe('Anthropic error types and statuses, one table', () => {
  it('reads every type the emulator says back as a status the emulator says it for', () => {
    for (const type of SAID) expect([type, messagesErrorType(anthropicErrorStatus(type))]).toEqual([type, type]);
  });

  it('names every status as the type whose status it is read back as, or the 4xx/5xx catch-all', () => {
    for (let status = 400; status < 600; status++) {
      const type = anthropicErrorType(status);
      expect(messagesErrorType(status)).toBe(type);
      expect(anthropicErrorType(anthropicErrorStatus(type))).toBe(type);
    }
    expect([anthropicErrorType(503), anthropicErrorType(408), anthropicErrorType(418), anthropicErrorType(599)]).toEqual(['overloaded_error', 'timeout_error', 'invalid_request_error', 'api_error']);
  });

  it('reads request_too_large (Anthropic’s 413) but says a 413 as the service does, invalid_request_error; an unknown type is a 502', () => {
    expect(anthropicErrorStatus('request_too_large')).toBe(413);
    expect(anthropicErrorType(413)).toBe('invalid_request_error');
    expect(anthropicErrorStatus('something_new')).toBe(502);
  });
});
