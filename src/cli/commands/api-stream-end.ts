/**
 * `router api`'s event stream read as it passes (its bytes go out unchanged): a stream that failed
 * under its 200 (a chat chunk's `error` or finish reason "error", a messages `error` event, a Responses
 * `response.failed` or `error`) ends the command with the exit code of that error's status.
 */
import { SSEDecoder, type SSEEvent } from '../../client/sse.js';
import { statusLine } from '../../client/errors.js';
import { isRecord } from '../../internal/shape.js';
import { anthropicErrorStatus } from '../../internal/anthropic-error-types.js';
import { CliError, exitCodeForStatus } from '../exit-codes.js';

interface Failure {
  status: number;
  message: string;
}

const statusOf = (code: unknown) => (typeof code === 'number' && code >= 400 && code < 600 ? code : 502);
const said = (error: unknown, otherwise: string) => (isRecord(error) && typeof error.message === 'string' && error.message ? error.message : otherwise);

/** The failure an event reports, in any of the three endpoints' shapes; undefined for any other event. */
function failureOf(ev: SSEEvent): Failure | undefined {
  let data: unknown;
  try {
    data = JSON.parse(ev.data);
  } catch {
    return undefined;
  }
  if (!isRecord(data)) return undefined;
  const error = data.error;
  // Messages: {type: 'error', error: {type, message}}.
  if ((ev.event === 'error' || data.type === 'error') && isRecord(error) && typeof error.type === 'string') return { status: anthropicErrorStatus(error.type), message: said(error, error.type) };
  // Responses: an `error` event ({type, code, message}), or `response.failed` with its response's error.
  if (data.type === 'error') return { status: statusOf(data.code), message: said(data, 'the response failed') };
  if (data.type === 'response.failed') {
    const failed = isRecord(data.response) ? data.response.error : undefined;
    return { status: statusOf(isRecord(failed) ? failed.code : undefined), message: said(failed, 'the response failed') };
  }
  // Chat: a chunk's `error` ({code, message}), or a choice that finished with "error".
  if (isRecord(error)) return { status: statusOf(error.code), message: said(error, 'the provider failed mid-stream') };
  const choices = Array.isArray(data.choices) ? data.choices : [];
  if (choices.some((c) => isRecord(c) && c.finish_reason === 'error')) return { status: 502, message: 'the provider failed mid-stream (finish_reason "error")' };
  return undefined;
}

/** Watches the bytes of an event stream as they pass; `failure` is the first error it reported. */
export class StreamEnd {
  private decoder: SSEDecoder | undefined = new SSEDecoder();
  private failure: Failure | undefined;

  async *watch(body: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
    for await (const piece of body) {
      this.see(() => this.decoder?.push(piece));
      yield piece;
    }
    this.see(() => this.decoder?.end());
  }

  private see(events: () => SSEEvent[] | undefined): void {
    try {
      for (const ev of events() ?? []) this.failure ??= failureOf(ev);
    } catch {
      // An event past the decoder's bound: the bytes still go out, unwatched.
      this.decoder = undefined;
    }
  }

  /** Throws the failure the stream ended in, if it did: one line, the exit code of its status. */
  check(request: string): void {
    if (this.failure) throw new CliError(`${request}: the stream ended in an error (${statusLine(this.failure.status)}): ${this.failure.message}`, exitCodeForStatus(this.failure.status));
  }
}

/** An event stream's answer: watched; any other, undefined. */
export const streamEnd = (contentType: unknown) => (/^text\/event-stream/i.test(String(contentType ?? '')) ? new StreamEnd() : undefined);
