import type { Ctx } from '../http/http.js';
import { recordGeneration, type Served } from '../resources/generations.js';
import { genId } from '../resources/chat.js';
import { textOf } from '../models/content-text.js';
import { reasoningOf } from '../models/responses-reasoning.js';
import { keepContent } from '../resources/generation-content.js';
import type { AnswerText } from './transcript.js';
import type { Candidate } from './candidates.js';

type Body = Record<string, unknown>;

/** An upstream's answer as the caller got it: the gateway's id it carries, the upstream's own, its usage (priced), its end. */
export interface UpstreamAnswer {
  id?: unknown;
  /** The id the upstream gave its answer (none when it gave none): the generation's `upstream_id`. */
  upstreamId?: unknown;
  usage?: unknown;
  cost: number;
  finish?: unknown;
  streamed: boolean;
  /** The caller hung up after part of it (charged that part). */
  cancelled?: boolean;
  /** The upstream broke its stream after content went out. */
  broken?: boolean;
  /** A chat or Responses answer's text, kept for `GET /v1/generation/content` as a fake model's is. */
  text?: AnswerText;
  /** The tier the answer says it ran on (its `service_tier`; a messages answer's is in its usage). */
  tier?: unknown;
}

/** The request's facts a kept generation names: when it came in (the store's clock), its user and session. */
export interface Asked {
  startedAt: number;
  /** A chat or Responses request: its answer's content is kept (the body's text, as ctx.json() read it). */
  keepsContent?: boolean;
  user?: unknown;
  sessionId?: string;
}

/** A tier as an answer reports it: a non-empty string, else unknown (null in the generation). */
const reportedTier = (tier: unknown) => (typeof tier === 'string' && tier ? tier : null);

const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * Keeps an answer delivered by an upstream for `GET /v1/generation`, as a fake model's is kept: the
 * gateway's model id, the provider that answered, its tokens, the cost charged, the latency. Found
 * by the id the caller saw (the gateway's own: an upstream may give every answer the same id); an
 * answer without one cannot be asked for, so is not kept.
 */
export function keepUpstreamAnswer(ctx: Ctx, c: Candidate, asked: Asked, apiType: Served['apiType'], got: UpstreamAnswer): void {
  if (typeof got.id !== 'string' || !got.id) return;
  const u = (got.usage && typeof got.usage === 'object' ? got.usage : {}) as Body;
  const details = (u.completion_tokens_details ?? u.output_tokens_details) as Body | undefined;
  recordGeneration(ctx, {
    id: got.id,
    upstreamId: typeof got.upstreamId === 'string' && got.upstreamId ? got.upstreamId : undefined,
    model: c.model.id,
    provider: c.slug,
    apiType,
    promptTokens: count(u.prompt_tokens ?? u.input_tokens),
    completionTokens: count(u.completion_tokens ?? u.output_tokens),
    reasoningTokens: count(details?.reasoning_tokens),
    cost: got.cost,
    streamed: got.streamed,
    finishReason: typeof got.finish === 'string' ? got.finish : null,
    cancelled: got.cancelled,
    startedAt: asked.startedAt,
    user: asked.user,
    sessionId: asked.sessionId,
    serviceTier: reportedTier(got.tier ?? u.service_tier),
  });
  const said = got.text?.text();
  // As a fake model's (chat.ts): a cut answer's text is not stored, a broken one's error is.
  if (asked.keepsContent && said) keepContent(ctx, got.id, got.cancelled || got.broken ? null : said.completion, got.cancelled || got.broken ? null : said.reasoning, got.broken ? { provider: c.slug } : undefined);
}

/** A whole chat answer's text, as a stream's Transcript gives it: its first choice's content and reasoning. */
export function answerText(answer: Body): AnswerText {
  const message = ((answer.choices as Body[] | undefined)?.[0]?.message ?? {}) as Body;
  const said = { completion: textOf(message.content ?? ''), reasoning: typeof message.reasoning === 'string' ? message.reasoning : null };
  return { text: () => said };
}

/**
 * Gives a whole answer the gateway's own id, as the caller's generation is named (an upstream may
 * repeat one id, or send none: OpenAI's embeddings), and the request's charge (made next) names it; returns the upstream's.
 */
export function ownId(ctx: Ctx, c: Candidate, answer: Body, prefix = 'gen'): unknown {
  const upstream = answer.id;
  answer.id = ctx.generation = genId(prefix);
  ctx.servedBy = servedBy(c);
  return upstream;
}

/** The gateway's model id and the provider answering it, as a generation's record names them. */
export const servedBy = (c: Candidate): { model: string; provider: string } => ({ model: c.model.id, provider: c.slug });

/** A Responses answer's status as a finish reason: completed is stop, incomplete is length. */
export const responseFinish = (status: unknown): unknown => (status === 'completed' ? 'stop' : status === 'incomplete' ? 'length' : status);

/** The finish reason of a whole chat answer's first choice. */
export const finishOf = (answer: Body): unknown => (answer.choices as Body[] | undefined)?.[0]?.finish_reason;

/** A Responses answer's text, as a fake model's is kept: its `output_text`, else its message items' `output_text` parts; its reasoning items' text. */
export function responseText(response: Body): AnswerText {
  const items = (Array.isArray(response.output) ? response.output : []) as Body[];
  const parts = items.flatMap((item) => (item?.type === 'message' && Array.isArray(item.content) ? (item.content as Body[]) : []));
  const completion = typeof response.output_text === 'string' ? response.output_text : parts.filter((p) => p?.type === 'output_text' && typeof p.text === 'string').map((p) => p.text).join('');
  return { text: () => ({ completion, reasoning: reasoningOf(response) }) };
}
