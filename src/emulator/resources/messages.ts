/**
 * `POST /v1/messages`, Anthropic's Messages format: the request made the chat request it means
 * (messages-format.ts) and run as chat is, over the fake models or the gateway's providers (credits,
 * generations, fallback, cassettes as chat's); chat's answer, whole or streamed, made a messages
 * answer on its way out, and every error in the OpenAPI's AnthropicMessagesErrorResponse shape.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Ctx } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import type { ChatGateway } from '../providers/types.js';
import { bad } from '../http/validate.js';
import { handleChat } from './chat.js';
import { promptCount } from '../routing/hang-up.js';
import { chatBodyOf, messageOf } from './messages-format.js';
import { MessagesStream } from './messages-stream.js';
import { messagesErrorFromChat } from './messages-errors.js';

type Body = Record<string, unknown>;

/** The chat request each answer made a messages result is the answer to (a refusal before the handler is shaped all the same). */
const answered = new WeakMap<ServerResponse, Body>();

/** Chat's error body (`{error: {code, message, metadata}}` and fields beside it) as a messages error. */
function messagesError(parsed: Body, status: number, requestId: string): Body {
  const { error, ...fields } = parsed;
  return { type: 'error', error: messagesErrorFromChat(error, status), ...fields, request_id: requestId };
}

/** A whole JSON answer of the route in the messages format: an error's shape, or chat's completion as a message. */
function shapedJson(text: string, status: number, ctx: Ctx): string {
  let parsed: Body;
  try {
    parsed = JSON.parse(text) as Body;
  } catch {
    return text; // a fault's cut answer stays cut
  }
  if (status >= 400) return JSON.stringify(messagesError(parsed, status, ctx.requestId));
  const chat = answered.get(ctx.res);
  if (!chat || !Array.isArray(parsed.choices)) return text;
  return JSON.stringify(messageOf(parsed, typeof parsed.service_tier === 'string' && ['standard', 'priority', 'batch'].includes(parsed.service_tier) ? parsed.service_tier : 'standard', chat.stop));
}

const textOf = (chunk: unknown): string => (typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '');

/**
 * Shapes every answer written to the route's response: a JSON one held to its end and written made
 * (its length made again), an event stream's frames made Anthropic's events as they are written.
 */
export function shapeMessages(ctx: Ctx): void {
  const res = ctx.res;
  const writeHead = res.writeHead.bind(res) as (status: number, headers: OutgoingHttpHeaders) => ServerResponse;
  const write = res.write.bind(res) as (chunk: string, done?: (err?: Error | null) => void) => boolean;
  const end = res.end.bind(res) as (chunk: string, done?: () => void) => ServerResponse;
  let head: { status: number; headers: OutgoingHttpHeaders } | undefined;
  let stream: MessagesStream | undefined;
  let held = '';
  /** A whole answer shaped already, a fault then cutting it: the rest goes out as it is written. */
  let shaped = false;
  ctx.shapeWhole = (text, status) => ((shaped = true), shapedJson(text, status, ctx));
  res.writeHead = ((status: number, headers?: unknown) => {
    if (shaped) return writeHead(status, (headers ?? {}) as OutgoingHttpHeaders);
    const h = { ...(headers && typeof headers === 'object' ? (headers as OutgoingHttpHeaders) : {}) };
    if (String(h['content-type'] ?? '').startsWith('text/event-stream')) {
      const chat = answered.get(res);
      stream = new MessagesStream(chat && { stops: chat.stop, inputTokens: () => promptCount(chat) });
      return writeHead(status, h);
    }
    head = { status, headers: h };
    return res;
  }) as typeof res.writeHead;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    const done = rest.find((r) => typeof r === 'function') as ((err?: Error | null) => void) | undefined;
    const out = stream ? stream.push(textOf(chunk)) : shaped ? textOf(chunk) : ((held += textOf(chunk)), '');
    if (out) return write(out, done);
    if (done) process.nextTick(done);
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    const done = [chunk, ...rest].find((r) => typeof r === 'function') as (() => void) | undefined;
    const last = typeof chunk === 'function' ? '' : textOf(chunk);
    if (stream) return end(stream.push(last) + stream.end(), done);
    if (!head || shaped) return end(held + last, done);
    const text = shapedJson(held + last, head.status, ctx);
    return (writeHead(head.status, { ...head.headers, 'content-length': Buffer.byteLength(text) }), end(text, done));
  }) as typeof res.end;
}

async function handleMessages(ctx: Ctx, gateway?: ChatGateway): Promise<void> {
  const body = await ctx.json();
  // The OpenAPI's MessagesRequest requires a model (chat's request may leave it to the default; this one may not).
  if (typeof body.model !== 'string' || !body.model) bad('model is required (a string)');
  const chat = chatBodyOf(body);
  answered.set(ctx.res, chat);
  return handleChat(ctx, gateway, chat);
}

export const messagesRoutes = defineRoutes((parts: { gateway?: ChatGateway }) => [
  { method: 'POST', path: '/v1/messages', access: 'any', keyHeader: 'x-api-key', shape: shapeMessages, handler: (ctx) => handleMessages(ctx, parts.gateway) },
]);
