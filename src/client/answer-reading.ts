import { APIError } from './errors.js';
import type { ChatChunk, ChatCompletion, JSONObject } from './types.js';
import type { ResponsesResult } from './resources/responses.js';

/**
 * A 2xx answer that says it failed: a Responses result `failed` or `cancelled`, a chat choice that
 * finished with `error`, an answer with no choice at all. Its status is the error's own code when
 * that is an HTTP status, else 502 (the provider failed).
 */
export class FailedAnswerError extends APIError {
  override name = 'FailedAnswerError';
}

/** What an answer says, in any shape the API allows, and the failure it reports about itself. */
export interface AnswerReading {
  text: string;
  failure: FailedAnswerError | undefined;
}

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  metadata?: { error_type?: unknown };
}

export function failedAnswer(what: string, error: ErrorLike | null | undefined, body: unknown, requestId?: string): FailedAnswerError {
  const code = typeof error?.code === 'number' || typeof error?.code === 'string' ? error.code : undefined;
  const status = typeof code === 'number' && code >= 400 && code < 600 ? code : 502;
  const message = typeof error?.message === 'string' && error.message ? `${what}: ${error.message}` : what;
  const errorType = typeof error?.metadata?.error_type === 'string' ? error.metadata.error_type : typeof code === 'string' ? code : undefined;
  return new FailedAnswerError(status, message, { code, errorType, requestId, body });
}

/** Text of message content: a string, or the `text` of its text parts (`[{type: "text", text}]`). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { text: string } => part !== null && typeof part === 'object' && (part as JSONObject).type === 'text' && typeof (part as JSONObject).text === 'string')
    .map((part) => part.text)
    .join('');
}

/** A chat completion's text (its first choice's content, or its refusal when it has no content) and its failure. */
export function readCompletion(completion: ChatCompletion): AnswerReading {
  const choice = completion.choices[0];
  if (!choice) return { text: '', failure: failedAnswer('the answer holds no choice (an empty answer)', completion.error as ErrorLike, completion) };
  const message = (choice.message ?? {}) as { content?: unknown; refusal?: unknown };
  const text = contentText(message.content) || (typeof message.refusal === 'string' ? message.refusal : '');
  const failure = choice.finish_reason === 'error' ? failedAnswer('the provider failed (finish_reason "error")', completion.error as ErrorLike, completion) : undefined;
  return { text, failure };
}

/** The failure a streamed chunk reports without a top-level `error`: a choice that finished with `error`. */
export function chunkFailure(chunk: ChatChunk, requestId?: string): FailedAnswerError | undefined {
  if (!chunk.choices.some((c) => c?.finish_reason === 'error')) return undefined;
  return failedAnswer('the provider failed mid-stream (finish_reason "error")', undefined, chunk, requestId);
}

/** Text of the assistant's output messages (`output_text` parts, and refusals). */
export function outputText(r: ResponsesResult): string {
  if (typeof r.output_text === 'string' && r.output_text) return r.output_text;
  return r.output
    .filter((item) => item?.type === 'message')
    .flatMap((item) => (Array.isArray(item.content) ? (item.content as JSONObject[]) : []))
    .map((part) => (part?.type === 'output_text' && typeof part.text === 'string' ? part.text : part?.type === 'refusal' && typeof part.refusal === 'string' ? part.refusal : ''))
    .join('');
}

const UNFINISHED: Record<string, string> = {
  failed: 'the response failed',
  cancelled: 'the response was cancelled',
  queued: 'the response is still queued, not answered',
  in_progress: 'the response is still in progress, not answered',
};

/** A Responses result's text and its failure (failed, cancelled, not finished, or no output at all). */
export function readResponse(r: ResponsesResult): AnswerReading {
  const text = outputText(r);
  const empty = Array.isArray(r.output) && r.output.length === 0 && !text;
  const what = UNFINISHED[r.status] ?? (empty ? 'the response holds no output (an empty answer)' : undefined);
  return { text, failure: what ? failedAnswer(what, r.error, r) : undefined };
}
