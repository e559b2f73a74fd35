import { scrubResponsesEvent } from '../providers/responses-scrub.js';
import type { TextScrub } from '../providers/text-scrub.js';
import type { Ctx } from '../http/http.js';
import { openEventStream } from '../state/billing.js';
import { ProviderFailure, type QueuedEvents, type UpstreamReply } from '../providers/types.js';
import type { Candidate } from './candidates.js';
import { countedUsage, priceUsage, usable } from './usage.js';
import { brokenAfterContent, cutByCaller, eventObject, owedOnHangUp, pump, type RelayOutcome } from './relay.js';
import { Outgoing } from './outgoing.js';
import type { GatewayCharge } from './gateway-credits.js';
import { promptCount, RelayedTokens } from './hang-up.js';
import { countTokens } from '../models/models.js';
import { endUser } from './end-user.js';
import { responseText, servedBy } from './kept.js';
import { genId } from '../resources/chat.js';
import { cutText } from '../../internal/first-words.js';
import { failureBreak, responsesBreakError, type StreamBreak } from './stream-break.js';
import { upstreamCause } from '../providers/upstream-cause.js';
import { ResponseSoFar } from '../models/responses-so-far.js';

type Body = Record<string, unknown>;
type StreamReply = Extract<UpstreamReply, { kind: 'stream' }>;

const FINAL = ['response.completed', 'response.incomplete'];

/** An event that carries something of the answer: a delta of any kind, an output item, its end. */
const hasOutput = (type: string) => type.endsWith('.delta') || type === 'response.output_item.done' || FINAL.includes(type);

/**
 * The response object of an event (or a whole answer) under the gateway's model id (and `id`, when given), echoing the
 * caller's own end user where the upstream echoed the hashed identity it was sent (upstream-body.ts).
 */
function asGateway(response: unknown, c: Candidate, asked?: Body, id?: string): void {
  if (!response || typeof response !== 'object') return;
  const r = response as Body;
  if (r.model !== undefined) r.model = c.model.id;
  if (id !== undefined) r.id = id;
  for (const k of ['user', 'safety_identifier']) {
    const own = asked?.[k];
    if (typeof own === 'string' && r[k] === endUser(own)) r[k] = own;
  }
}

/**
 * Relays an upstream's Responses stream, each event under its own `event:` name. Events before the
 * first output are held: a stream that breaks, fails or errs there fails the candidate (the caller
 * sees nothing). After that a break ends the caller's stream with `response.failed`, never a clean end,
 * its output what was relayed (responses-so-far.ts), and is charged what was relayed.
 */
export interface ResponsesRelay {
  charge?: GatewayCharge;
  promptTokens?: () => number;
  hide?: (text: string) => string;
  /** The metadata fields the caller opted in to, set on each event's response once the candidate answers. */
  metadata?: () => Record<string, unknown>;
  /** The caller's request, whose own end user the responses echo. */
  asked?: Body;
  /** Provider keys hidden across delta events (text-scrub.ts): none looked for when undefined. */
  scrub?: TextScrub;
  /** Told when the first event with some output came (measures.ts). */
  first?: () => void;
}

export async function relayResponses(ctx: Ctx, reply: StreamReply, c: Candidate, opts: ResponsesRelay = {}): Promise<RelayOutcome> {
  const { charge, promptTokens, hide = String } = opts;
  const it = reply.events[Symbol.asyncIterator]();
  // The stream judged its first events for first_event_timeout_ms: their parse, taken, not made again.
  const parsedOf = (it as Partial<QueuedEvents>).takeParsed?.bind(it);
  const held: Body[] = [];
  for (;;) {
    let next: IteratorResult<string>;
    try {
      next = await it.next();
    } catch (err) {
      if (err instanceof ProviderFailure) return { failed: err };
      throw err;
    }
    if (next.done || next.value === '[DONE]') return { failed: new ProviderFailure('broken', `${c.slug}: the stream ended before any output`) };
    let event: Body;
    try {
      event = (parsedOf?.(next.value) ?? JSON.parse(next.value)) as Body;
    } catch {
      return { failed: new ProviderFailure('broken', `${c.slug}: a stream event that is not JSON`) };
    }
    if (!event || typeof event !== 'object' || Array.isArray(event)) return { failed: new ProviderFailure('broken', `${c.slug}: a stream event that is not a JSON object`) };
    const type = String(event.type);
    if (type === 'error' || type === 'response.failed') return { failed: new ProviderFailure('broken', `${c.slug}: ${type} before any output: ${cutText(JSON.stringify(event.error ?? (event.response as Body | undefined)?.error ?? {}), 200)}`) };
    held.push(event);
    if (hasOutput(type)) break;
  }
  opts.first?.();

  const res = ctx.res;
  // The caller went while the stream was held: nothing to open, nothing owed.
  if (res.destroyed) return { cost: 0, whole: false };
  const opened = openEventStream(ctx);
  const closed = () => opened() || res.destroyed;
  let cost = 0;
  let final = false;
  let last: Body = held[0]!;
  let lastResponse: Body = {};
  const tokens = new RelayedTokens();
  // What went out, for the `response.failed` a break ends with.
  const soFar = new ResponseSoFar();
  let ended = false;
  const metadata = opts.metadata?.();
  // The caller's id for the response: an upstream may give all its answers one id (docs/gateway.md).
  const id = (ctx.generation = genId());
  ctx.servedBy = servedBy(c);
  let upstreamId: unknown;
  charge?.onHangUp(() => (ended ? 0 : owedOnHangUp(c, tokens, promptTokens, () => (final ? cost : undefined))));
  const frame = (event: Body): string => {
    // Text held back by the scrub goes out before any event that is not its stream's next delta.
    const before = opts.scrub && scrubResponsesEvent(opts.scrub, event);
    if (before) return before.map((e) => (tokens.add(e.delta as string), soFar.add(e), `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`)).join('') + frame(event);
    last = event;
    soFar.add(event);
    if (event.response && typeof event.response === 'object') {
      lastResponse = event.response as Body;
      upstreamId ??= lastResponse.id;
    }
    asGateway(event.response, c, opts.asked, id);
    if (metadata && event.response && typeof event.response === 'object') Object.assign(event.response, metadata);
    const type = String(event.type);
    // Text, reasoning and tool arguments alike, as a fake model's stream counts them (stream-bill.ts);
    // not audio's base64 bytes (`response.audio.delta`), which are no text.
    if (type.endsWith('.delta') && type !== 'response.audio.delta' && typeof event.delta === 'string') tokens.add(event.delta);
    if (FINAL.includes(type)) {
      final = true;
      const response = event.response as Body | undefined;
      // A usage that says nothing: the prompt and the output relayed counted (usage.ts), in the final event.
      if (response && !usable(response.usage, c)) ({ usage: response.usage, cost } = countedUsage(c, promptTokens?.() ?? 0, tokens.written(), true, response.usage));
      else cost = priceUsage(response?.usage, c);
    }
    return `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
  };
  const out = new Outgoing('', tokens);
  for (const event of held) out.add(frame(event));
  let broken: StreamBreak | undefined;
  /** Adds one upstream event to `out`; true when the stream is over. */
  const relayed = (data: string): boolean => {
    if (data === '[DONE]') return true;
    const event = eventObject(data, c);
    if (event.type === 'error' || event.type === 'response.failed') {
      // An `error` event says its code and message beside its type; `response.failed` in its response's error.
      const error = event.error ?? (event.response as Body | undefined)?.error ?? { code: event.code, message: event.message, param: event.param };
      broken = { words: cutText(hide(JSON.stringify(error)), 200), cause: upstreamCause(error) };
      return true;
    }
    out.add(frame(event));
    return final;
  };
  // Read to the final event, not to the upstream's end: one that keeps its stream open after it is not
  // waited for (its connection is kept all the same, the end seen; a cassette is kept as the reader stops).
  if (!final) {
    const failure = await pump(res, closed, it, c, out.take, relayed);
    if (failure) broken = failureBreak(failure);
  }
  if (closed()) return { ...cutByCaller(charge, id, tokens, promptTokens, final ? lastResponse.usage : undefined, undefined), upstreamId, text: responseText(lastResponse), tier: lastResponse.service_tier };
  ended = true;
  if (broken === undefined && final) {
    charge?.(cost);
    res.end(out.rest());
    return { cost, whole: true, id, upstreamId, usage: lastResponse.usage, finish: lastResponse.status, text: responseText(lastResponse), tier: lastResponse.service_tier };
  }
  const pending = { ...lastResponse, model: c.model.id, status: 'failed', output: soFar.output(), output_text: soFar.text(), error: responsesBreakError(broken ?? { words: 'the stream ended before its final event', cause: 'provider_unavailable' }) };
  const failed = { type: 'response.failed', sequence_number: Number(last.sequence_number ?? 0) + 1, response: pending };
  tokens.written();
  const outcome = { ...brokenAfterContent(charge, c, id, tokens, promptTokens, final ? cost : undefined, final ? lastResponse.usage : undefined), upstreamId, text: responseText(lastResponse), tier: lastResponse.service_tier };
  out.add(`event: response.failed\ndata: ${JSON.stringify(failed)}\n\n`);
  res.end(out.rest());
  return outcome;
}

/** A whole Responses answer as the caller gets it (`asked`: the caller's request), under the gateway's model id; its cost, priced. */
export function wholeResponse(answer: Body, c: Candidate, asked?: Body): number {
  asGateway(answer, c, asked);
  if (usable(answer.usage, c)) return priceUsage(answer.usage, c);
  const said = responseText(answer).text();
  const counted = countedUsage(c, promptCount(asked), countTokens(said?.completion ?? '') + countTokens(said?.reasoning ?? ''), true, answer.usage);
  answer.usage = counted.usage;
  return counted.cost;
}

/**
 * A whole Responses answer as the stream of it (an upstream that answered a stream request whole):
 * `response.created`, each output item added, its text (or a function call's arguments) in one delta,
 * done, then `response.completed` (or `.incomplete`) with the whole answer, as the Responses API streams.
 */
export function responseStreamOf(answer: Body): StreamReply {
  const events: Body[] = [{ type: 'response.created', response: { ...answer, status: 'in_progress', output: [], usage: null } }];
  const output = Array.isArray(answer.output) ? (answer.output as Body[]) : [];
  output.forEach((item, output_index) => {
    const item_id = item.id;
    const parts = item.type === 'message' && Array.isArray(item.content) ? (item.content as Body[]) : [];
    events.push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', ...(parts.length ? { content: [] } : {}) } });
    parts.forEach((part, content_index) => {
      const at = { item_id, output_index, content_index };
      events.push({ type: 'response.content_part.added', ...at, part: part.type === 'output_text' ? { ...part, text: '' } : part });
      if (part.type === 'output_text' && typeof part.text === 'string') {
        events.push({ type: 'response.output_text.delta', ...at, delta: part.text, logprobs: [] }, { type: 'response.output_text.done', ...at, text: part.text, logprobs: [] });
      }
      events.push({ type: 'response.content_part.done', ...at, part });
    });
    if (item.type === 'function_call' && typeof item.arguments === 'string') {
      events.push({ type: 'response.function_call_arguments.delta', item_id, output_index, delta: item.arguments }, { type: 'response.function_call_arguments.done', item_id, output_index, arguments: item.arguments });
    }
    events.push({ type: 'response.output_item.done', output_index, item });
  });
  events.push({ type: answer.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response: answer });
  async function* stream(): AsyncGenerator<string> {
    for (const [sequence_number, event] of events.entries()) yield JSON.stringify({ ...event, sequence_number });
  }
  return { kind: 'stream', status: 200, headers: {}, events: stream() };
}
