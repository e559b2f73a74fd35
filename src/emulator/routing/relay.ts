import { servedBy } from './kept.js';
import { Transcript, type AnswerText } from './transcript.js';
import type { Ctx } from '../http/http.js';
import { drainOrClose, openEventStream } from '../state/billing.js';
import { ProviderFailure, type QueuedEvents, type UpstreamReply } from '../providers/types.js';
import type { Candidate } from './candidates.js';
import { countedUsage, priceUsage, usable } from './usage.js';
import type { GatewayCharge } from './gateway-credits.js';
import { chunkTokens, hangUpCost, RelayedTokens } from './hang-up.js';
import { Outgoing } from './outgoing.js';
import { answers } from '../providers/first-answer.js';
import { TAKEN, UpstreamEvents } from '../providers/upstream-events.js';
import { PlainFrames } from './plain-frames.js';
import { pumpEvents } from './event-pump.js';
import { caughtFailure, failureBreak, type StreamBreak } from './stream-break.js';
import { upstreamCause } from '../providers/upstream-cause.js';
import { serviceReasoning } from './answer-shape.js';
import { genId } from '../resources/chat.js';
import { cutText } from '../../internal/first-words.js';
import { heldChoices, scrubChatChunk } from '../providers/chat-scrub.js';
import type { TextScrub } from '../providers/text-scrub.js';

type Body = Record<string, unknown>;
type StreamReply = Extract<UpstreamReply, { kind: 'stream' }>;

export interface RelayOptions {
  /** The metadata fields of the first chunk, once the candidate is known to answer. */
  metadata?: () => Record<string, unknown>;
  /** Charges a whole answer's cost, before its end is written (a kill -9 after the end loses no charge). */
  charge?: GatewayCharge;
  /** An upstream's words as the caller gets them (without a provider key it echoed). */
  hide?: (text: string) => string;
  /** The request's prompt tokens as estimated, for a caller who hangs up before the upstream's usage came. */
  promptTokens?: () => number;
  /** Provider keys hidden across events (text-scrub.ts): none looked for when undefined. */
  scrub?: TextScrub;
  /** Told when the first chunk with some of an answer came (measures.ts: the latency's end). */
  first?: () => void;
}

/**
 * What a caller who hangs up after content was relayed owes (docs/gateway.md): the upstream's usage
 * priced when it came, else the prompt's estimate and the content tokens written to it so far, at the
 * provider's prices (without them, those its upstream last reported, else the prices the model is listed at).
 */
export function owedOnHangUp(c: Candidate, tokens: RelayedTokens, promptTokens: (() => number) | undefined, priced: () => number | undefined): number {
  if (tokens.sent <= 0) return 0;
  return priced() ?? hangUpCost(c.model.prices ?? c.model.reported ?? c.listed, promptTokens?.() ?? 0, tokens.sent);
}

/** An upstream event that must be parsed, parsed; a break when it is not a JSON object. */
export function eventObject(data: string, c: Candidate): Body {
  const event = JSON.parse(data) as Body;
  if (!event || typeof event !== 'object' || Array.isArray(event)) throw new ProviderFailure('broken', `${c.slug}: a stream event that is not a JSON object`);
  return event;
}

/**
 * What a relayed stream came to: passed over before its first token, or answered (cost charged when
 * whole; the gateway's id and the upstream's, usage, end kept), or cut after content went out: by the caller (`cancelled`) or by
 * the upstream (`broken`).
 */
export type RelayOutcome = { failed: ProviderFailure } | { cost: number; whole: boolean; id?: unknown; upstreamId?: unknown; usage?: unknown; finish?: unknown; cancelled?: boolean; broken?: boolean; text?: AnswerText; tier?: unknown };

/**
 * The relay's loop once the caller's stream is open: writes what `take()` gives (the frames of one
 * network read go out in one write), waits for the next event, and hands it and those already queued
 * with it to `relayed` until that says the stream is over, the upstream ends, or the caller goes.
 * Returns the break in words when reading or relaying threw: one the adapter names, or an event that
 * is not a JSON object (its parse or use threw).
 */
export async function pump(res: Ctx['res'], closed: () => boolean, it: AsyncIterator<string>, c: Candidate, take: () => Buffer | undefined, relayed: (data: string) => boolean): Promise<ProviderFailure | undefined> {
  if (it instanceof UpstreamEvents) return pumpEvents(res, closed, it, c.slug, take, relayed);
  const queued = (it as Partial<QueuedEvents>).eachQueued?.bind(it);
  try {
    for (;;) {
      const out = take();
      // A response already closed says so no more: its drain would be waited for ever.
      if (out && !res.write(out) && !res.destroyed) await drainOrClose(res);
      const next = await it.next();
      if (closed() || next.done) return undefined;
      if (relayed(next.value) || queued?.(relayed)) return undefined;
    }
  } catch (err) {
    return caughtFailure(err, c.slug);
  }
}

/**
 * Relays an upstream's stream to the caller. Chunks before the first with some of an answer (answers():
 * content, reasoning, a refusal, a tool call, audio, an image, its end, usage; not a role alone nor an
 * empty `tool_calls: []`) are held: a stream that breaks there fails the candidate (the next is tried,
 * the caller sees nothing). Once that chunk is sent, a break ends the caller's stream with the spec's
 * error chunk, never a clean end.
 */
export async function relayStream(ctx: Ctx, reply: StreamReply, c: Candidate, opts: RelayOptions): Promise<RelayOutcome> {
  const it = reply.events[Symbol.asyncIterator]();
  // The stream judged its first events for first_event_timeout_ms: their parse, taken, not made again.
  const parsedOf = (it as Partial<QueuedEvents>).takeParsed?.bind(it);
  const held: Body[] = [];
  // The caller's id for every chunk: an upstream may give all its answers one id (docs/gateway.md).
  const id = (ctx.generation = genId());
  ctx.servedBy = servedBy(c);
  let plainFrames: PlainFrames | undefined;
  let upstreamDone = false;
  for (;;) {
    let next: IteratorResult<string>;
    try {
      next = await it.next();
    } catch (err) {
      if (err instanceof ProviderFailure) return { failed: err };
      throw err;
    }
    if (next.done || next.value === '[DONE]') {
      if (!held.length) return { failed: new ProviderFailure('broken', `${c.slug}: the stream ended before any token`) };
      upstreamDone = true;
      break;
    }
    let chunk: Body;
    try {
      chunk = (parsedOf?.(next.value) ?? JSON.parse(next.value)) as Body;
    } catch {
      return { failed: new ProviderFailure('broken', `${c.slug}: a stream event that is not JSON`) };
    }
    if (!chunk || typeof chunk !== 'object' || Array.isArray(chunk)) return { failed: new ProviderFailure('broken', `${c.slug}: a stream event that is not a JSON object`) };
    if (chunk.error) return { failed: new ProviderFailure('broken', `${c.slug}: error before the first token: ${cutText(JSON.stringify(chunk.error), 200)}`) };
    plainFrames ??= new PlainFrames(chunk, c, id);
    held.push(chunk);
    // One rule for both: the chunk that stops first_event_timeout_ms's timer opens the caller's stream.
    if (answers(chunk)) break;
  }
  opts.first?.();

  const res = ctx.res;
  // The caller went while the stream was held: nothing to open, nothing owed.
  if (res.destroyed) return { cost: 0, whole: false };
  const opened = openEventStream(ctx);
  const closed = () => opened() || res.destroyed;
  let cost = 0;
  let usage: unknown, given: unknown;
  /** The tier the stream's chunks report (`service_tier`). */
  let tier: unknown;
  let finish: unknown;
  let last: Body = held[0]!;
  let first = true;
  const tokens = new RelayedTokens();
  const text = new Transcript();
  let ended = false;
  opts.charge?.onHangUp(() => (ended ? 0 : owedOnHangUp(c, tokens, opts.promptTokens, () => (usage ? cost : undefined))));
  /** Adds a parsed chunk's frame, relabelled; its usage priced, its end kept. */
  const frame = (chunk: Body): void => {
    last = chunk;
    if (scrub) scrubChatChunk(scrub, chunk);
    if (chunk.model !== undefined) chunk.model = c.model.id;
    chunk.id = id;
    chunk.provider = c.slug;
    if (chunk.service_tier != null) tier = chunk.service_tier;
    if (usable(chunk.usage, c)) {
      cost = priceUsage(chunk.usage, c);
      usage = chunk.usage;
    } else if (chunk.usage) [given, chunk.usage] = [chunk.usage, undefined]; // not relayed: the end counts what it lacks
    const choices = chunk.choices as Body[] | undefined;
    if (Array.isArray(choices)) for (const each of choices) serviceReasoning(each?.delta);
    const choice = choices?.[0];
    finish = choice?.finish_reason ?? finish;
    text.add(choice?.delta);
    chunkTokens(chunk, tokens);
    if (first && opts.metadata) Object.assign(chunk, opts.metadata());
    first = false;
    out.add('data: ');
    out.add(JSON.stringify(chunk));
    out.add('\n\n');
  };
  const out = new Outgoing(': ROUTER PROCESSING\n\n', tokens);
  const scrub = opts.scrub;
  // Plain chunks go out as they came only when their content is clean: else parsed, and framed with the scrub's text.
  if (scrub) plainFrames!.clean = (content, data) => (data === undefined || scrub.inertMembers(data)) && !scrub.needs('0.content', content);
  const upstreamId = scrub && typeof held[0]!.id === 'string' ? scrub.field(held[0]!.id) : held[0]!.id;
  held.forEach(frame);
  let broken: StreamBreak | undefined;
  /** A plain chunk was framed (PlainFrames): its content's tokens and text counted. */
  const framedPlain = (): true => {
    tokens.add(plainFrames!.content);
    text.addContent(plainFrames!.content);
    return true;
  };
  /** Adds one upstream event to `out`; true when the stream is over (its [DONE], an error). */
  const relayed = (data: string): boolean => {
    if (data === TAKEN) return false;
    if (data === '[DONE]') return true;
    if (plainFrames!.frameTo(data, out.add)) {
      framedPlain();
      return false;
    }
    const chunk = eventObject(data, c);
    if (chunk.error) {
      broken = { words: cutText((opts.hide ?? String)(JSON.stringify(chunk.error)), 200), cause: upstreamCause(chunk.error) };
      return true;
    }
    frame(chunk);
    return false;
  };
  // Plain chunks framed from the bytes they came in, not decoded to text first (the rest as above).
  const events = it instanceof UpstreamEvents ? it : undefined;
  if (events) events.takeBytes = (piece, start, end) => plainFrames!.frameBytesTo(piece, start, end, out) && framedPlain();
  const failure = upstreamDone ? undefined : await pump(res, closed, it, c, out.take, relayed);
  if (failure) broken = failureBreak(failure);
  if (events) events.takeBytes = undefined;
  if (closed()) return { ...cutByCaller(opts.charge, id, tokens, opts.promptTokens, usage, finish), upstreamId, text, tier };
  ended = true;
  if (broken !== undefined) {
    const errorChunk = {
      id,
      object: 'chat.completion.chunk',
      created: last.created,
      model: c.model.id,
      provider: c.slug,
      error: { code: 502, message: `Provider returned an error mid-stream: ${broken.words}`, metadata: { error_type: broken.cause } },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error', logprobs: null }],
    };
    // Every frame before the error counts as written (brokenAfterContent), as the end writes them.
    tokens.written();
    const outcome = { ...brokenAfterContent(opts.charge, c, id, tokens, opts.promptTokens, usage ? cost : undefined, usage), upstreamId, text, tier };
    out.add(`data: ${JSON.stringify(errorChunk)}\n\ndata: [DONE]\n\n`);
    res.end(out.rest());
    return outcome;
  }
  const rest = scrub && heldChoices(scrub);
  if (rest) out.add(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: last.created, model: c.model.id, provider: c.slug, choices: rest })}\n\n`);
  if (!usage) {
    ({ usage, cost } = countedUsage(c, opts.promptTokens?.() ?? 0, tokens.written(), false, given));
    out.add(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: last.created, model: c.model.id, provider: c.slug, choices: [], usage })}\n\n`);
  }
  opts.charge?.(cost);
  out.add('data: [DONE]\n\n');
  res.end(out.rest());
  return { cost, whole: true, id, upstreamId, usage, finish, text, tier };
}

/** A stream the caller hung up on: what it was charged, kept as cancelled once content went out. */
export function cutByCaller(charge: GatewayCharge | undefined, id: unknown, tokens: RelayedTokens, promptTokens: (() => number) | undefined, usage: unknown, finish: unknown): RelayOutcome {
  const cost = charge?.hungUp ?? 0;
  if (tokens.sent <= 0) return { cost: 0, whole: false };
  return { cost, whole: false, cancelled: true, id, usage: usage ?? { prompt_tokens: promptTokens?.() ?? 0, completion_tokens: tokens.sent }, finish };
}

/**
 * A stream the upstream broke after its first token (every frame before the error counted as
 * written): charged what was relayed, as a caller's hang-up is (`owedOnHangUp`: the upstream's
 * usage priced, `cost`, when it came), before the end is written; kept as ended in error, so its
 * generation answers and the caller's ledger settles (docs/gateway.md).
 */
export function brokenAfterContent(charge: GatewayCharge | undefined, c: Candidate, id: unknown, tokens: RelayedTokens, promptTokens: (() => number) | undefined, cost: number | undefined, usage?: unknown): RelayOutcome {
  charge?.cut(owedOnHangUp(c, tokens, promptTokens, () => cost));
  return { cost: charge?.charged ?? 0, whole: false, broken: true, id, usage: usage ?? { prompt_tokens: promptTokens?.() ?? 0, completion_tokens: tokens.sent }, finish: 'error' };
}

/** A whole chat answer as the stream of it: its message in one delta, its end, its usage, [DONE]. */
export function streamOf(answer: Body): StreamReply {
  const base = { id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model };
  const choice = ((answer.choices as Body[] | undefined) ?? [])[0] ?? {};
  const { role: _role, ...message } = (choice.message ?? {}) as Body;
  const finish = choice.finish_reason ?? 'stop';
  const chunks = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', ...message }, finish_reason: null }] },
    // What else the choice says of its end (its provider's reason, vLLM's stop sequence) goes with it.
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish, ...Object.fromEntries(['native_finish_reason', 'stop_reason', 'matched_stop'].filter((k) => choice[k] !== undefined).map((k) => [k, choice[k]])) }] },
    ...(answer.usage ? [{ ...base, choices: [], usage: answer.usage }] : []),
  ];
  async function* events(): AsyncGenerator<string> {
    for (const chunk of chunks) yield JSON.stringify(chunk);
    yield '[DONE]';
  }
  return { kind: 'stream', status: 200, headers: {}, events: events() };
}
