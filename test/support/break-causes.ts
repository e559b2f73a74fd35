import type { IncomingMessage, ServerResponse } from 'node:http';
import { localUpstream } from './upstreams.js';

// An upstream's failure in the words real ones use, each named by a word the request's text holds, and
// the cause (`error_type`) the gateway must say of it in every shape it answers in.

/** A break after a stream's first content, as chat and Responses upstreams send it. */
export interface StreamCase {
  name: string;
  /** The break as a chat upstream sends it (a chunk's `error`). */
  chat: object;
  /** The break as a Responses upstream sends it (an `error` or `response.failed` event). */
  responses: object;
  cause: string;
  anthropic: string;
  responsesCode: string;
}

export const STREAM_CASES: StreamCase[] = [
  { name: 'anthropic-overloaded', chat: { type: 'overloaded_error', message: 'Overloaded' }, responses: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, cause: 'provider_overloaded', anthropic: 'overloaded_error', responsesCode: 'server_error' },
  { name: 'groq-rate-limit', chat: { message: 'Rate limit reached', type: 'tokens', code: 'rate_limit_exceeded' }, responses: { type: 'error', code: 'rate_limit_exceeded', message: 'Rate limit reached', param: null }, cause: 'rate_limit_exceeded', anthropic: 'rate_limit_error', responsesCode: 'rate_limit_exceeded' },
  { name: 'status-digits', chat: { message: 'Too many', code: '429' }, responses: { type: 'response.failed', response: { status: 'failed', error: { code: '429', message: 'Too many' } } }, cause: 'rate_limit_exceeded', anthropic: 'rate_limit_error', responsesCode: 'rate_limit_exceeded' },
  { name: 'anthropic-timeout', chat: { type: 'timeout_error', message: 'Timed out' }, responses: { type: 'response.failed', response: { status: 'failed', error: { code: 'timeout_error', message: 'Timed out' } } }, cause: 'timeout', anthropic: 'timeout_error', responsesCode: 'server_error' },
  { name: 'google-exhausted', chat: { code: 'x', message: 'Quota', status: 'RESOURCE_EXHAUSTED' }, responses: { type: 'error', error: { message: 'Quota', status: 'RESOURCE_EXHAUSTED' } }, cause: 'rate_limit_exceeded', anthropic: 'rate_limit_error', responsesCode: 'rate_limit_exceeded' },
  { name: 'openai-server-error', chat: { message: 'The server had an error', type: 'server_error', code: null }, responses: { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'The server had an error' } } }, cause: 'provider_unavailable', anthropic: 'api_error', responsesCode: 'server_error' },
];

/** A whole (not streamed) answer that is an error: its status and body, or a body cut off (`cut`). */
export interface WholeCase {
  name: string;
  status: number;
  body?: object;
  cause: string;
  anthropic: string;
  /** The status the caller gets: 429 when the upstream said 429, else the gateway's 502. */
  answered: 429 | 502;
}

export const WHOLE_CASES: WholeCase[] = [
  { name: 'whole-anthropic-overloaded', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, cause: 'provider_overloaded', anthropic: 'overloaded_error', answered: 502 },
  { name: 'whole-openai-engine-overloaded', status: 503, body: { error: { message: 'That model is currently overloaded', type: 'server_error', code: 'engine_overloaded' } }, cause: 'provider_overloaded', anthropic: 'overloaded_error', answered: 502 },
  { name: 'whole-groq-rate-limit', status: 429, body: { error: { message: 'Rate limit reached', type: 'tokens', code: 'rate_limit_exceeded' } }, cause: 'rate_limit_exceeded', anthropic: 'rate_limit_error', answered: 429 },
  { name: 'whole-anthropic-timeout', status: 504, body: { type: 'error', error: { type: 'timeout_error', message: 'Timed out' } }, cause: 'timeout', anthropic: 'timeout_error', answered: 502 },
  { name: 'whole-google-deadline', status: 504, body: { error: { code: 504, message: 'Deadline', status: 'DEADLINE_EXCEEDED' } }, cause: 'timeout', anthropic: 'timeout_error', answered: 502 },
  { name: 'whole-error-in-a-200', status: 200, body: { error: { message: 'Too many', code: 429 } }, cause: 'rate_limit_exceeded', anthropic: 'rate_limit_error', answered: 502 },
  { name: 'whole-openai-server-error', status: 500, body: { error: { message: 'The server had an error', type: 'server_error', code: null } }, cause: 'provider_unavailable', anthropic: 'api_error', answered: 502 },
  { name: 'whole-cut', status: 200, cause: 'provider_unavailable', anthropic: 'api_error', answered: 502 },
];

/** A chat stream's first piece of text. */
const firstChunk = () => `data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'one ' }, finish_reason: null }] })}\n\n`;

function answer(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
  const text = JSON.stringify(body.messages ?? body.input);
  const whole = WHOLE_CASES.find((c) => text.includes(`"${c.name}"`));
  if (whole) {
    res.writeHead(whole.status, { 'content-type': 'application/json' });
    if (whole.body) return void res.end(JSON.stringify(whole.body));
    return void res.write('{"id":"up-1","choi', () => res.destroy());
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  // One piece of text, then nothing more: the provider's idle_timeout_ms lets it go.
  if (text.includes('"stall"')) return void res.write(firstChunk());
  const at = STREAM_CASES.find((c) => text.includes(`"${c.name}"`))!;
  if (req.url?.endsWith('/responses')) {
    const event = (data: Record<string, unknown>) => res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
    event({ type: 'response.created', sequence_number: 0, response: { id: 'resp_x', object: 'response', model: 'm', status: 'in_progress', output: [] } });
    event({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_x', output_index: 0, content_index: 0, delta: 'one ' });
    event({ ...at.responses, sequence_number: 2 });
    return void res.end();
  }
  res.write(firstChunk());
  res.end(`data: ${JSON.stringify({ error: at.chat })}\n\n`);
}

/** An upstream of chat and Responses answers that fails as the request's text names: a stream's break, a whole answer's error, a stall. */
export const breakingUpstream = () => localUpstream(answer);

/** A providers file over `root`: `test/m` by chat, `test/r` by Responses. */
export const breakingProviders = (root: string, more = '') =>
  `providers:\n  - { name: up, base_url: "${root}", api_key_env: UP_KEY, models: { test/m: m }${more} }\n  - { name: resp, responses: true, base_url: "${root}", api_key_env: UP_KEY, models: { test/r: m }${more} }\n`;

/** The last data frame of a stream's text, parsed. */
export function lastFrame(text: string): any {
  const frames = text.split('\n\n').filter((f) => f && !f.startsWith(':') && f !== 'data: [DONE]');
  return JSON.parse(frames.at(-1)!.split('\n').find((l) => l.startsWith('data: '))!.slice(6));
}
