import { randomHex } from '../http/ids.js';
import { HttpError, type BeforeParse, type Ctx } from '../http/http.js';
import { costOf, generate, outputLimit, pieces, piecesOf, seedOf, prng, type Generation, type ModelSpec } from '../models/models.js';
import { asksMetadata, metadataFields, type MetadataAsk, type RouteAsk, type Routed } from '../routing/routed.js';
import { route } from '../routing/fake-route.js';

export type { Routed };
export { route };
import { bad, checkMetadata, checkModelsList, checkRouteAndModalities, checkSessionAndUser, checkStopConditions, optEnum, optNumber, optString, servedTier } from '../http/validate.js';
import { reserve, writeSSE } from '../state/billing.js';
import { chatEventTokens, streamBill, tokensOwed } from './stream-bill.js';
import { checkChatOptionTypes } from '../http/option-types.js';
import { jsonTemplate, Serialized } from '../http/serialized.js';
import { richAnswer, type RichMessage } from '../models/rich-answer.js';
import { textOf } from '../models/content-text.js';
import { keepStopHit } from '../models/stop-sequences.js';
import { completionDetails, fitAnswer, richDeltas, richMessage } from '../models/rich-chat.js';
import { defineRoutes } from '../http/routes.js';
import type { ChatGateway } from '../providers/types.js';
import { keepContent } from './generation-content.js';
import { recordGeneration } from './generations.js';

type Body = Record<string, unknown>;

const ROLES = ['system', 'user', 'assistant', 'developer', 'tool'];
const EFFORTS = ['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none', null] as const;
const SERVICE_TIERS = ['auto', 'default', 'fast', 'flex', 'priority', 'scale', 'ultrafast', null] as const;

/** Checks a chat request against the spec's rules; throws HttpError(400) on the first violation. */
export function validateChat(body: Body): void {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) bad('messages must be an array with at least 1 item');
  messages.forEach((m, i) => {
    if (!m || typeof m !== 'object') bad(`messages[${i}] must be an object`);
    const role = (m as Body).role;
    if (typeof role !== 'string' || !ROLES.includes(role)) bad(`messages[${i}].role must be one of ${ROLES.join(', ')}`);
    const content = (m as Body).content;
    if (content !== null && content !== undefined && typeof content !== 'string' && !Array.isArray(content)) {
      bad(`messages[${i}].content must be a string or an array of parts`);
    }
  });
  checkModelsList(body);
  optNumber(body, 'temperature', 0, 2);
  optNumber(body, 'top_p', 0, 1);
  // Provider-dependent in the spec: no range is the API's to set, only the type.
  optNumber(body, 'top_k', -Infinity, Infinity, true);
  optNumber(body, 'min_p', -Infinity, Infinity);
  optNumber(body, 'top_a', -Infinity, Infinity);
  optNumber(body, 'frequency_penalty', -2, 2);
  optNumber(body, 'presence_penalty', -2, 2);
  optNumber(body, 'repetition_penalty', -Infinity, Infinity);
  optNumber(body, 'top_logprobs', 0, 20, true);
  // Integers with no range in the spec; what a model can answer is checked by checkOutputLimit.
  optNumber(body, 'max_tokens', -Infinity, Infinity, true);
  optNumber(body, 'max_completion_tokens', -Infinity, Infinity, true);
  optNumber(body, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  const stop = body.stop;
  if (stop !== undefined && stop !== null) {
    const list = typeof stop === 'string' ? [stop] : stop;
    if (!Array.isArray(list) || list.some((s) => typeof s !== 'string')) bad('stop must be a string or an array of strings');
    if (list.length > 4) bad('stop may hold at most 4 sequences');
  }
  if (body.logprobs !== undefined && body.logprobs !== null && typeof body.logprobs !== 'boolean') bad('logprobs must be a boolean');
  const effort = optEnum(body, 'reasoning_effort', EFFORTS);
  const reasoning = body.reasoning as Body | undefined;
  if (effort && reasoning && typeof reasoning === 'object' && reasoning.effort !== undefined && reasoning.effort !== effort) {
    bad('reasoning_effort conflicts with reasoning.effort');
  }
  optEnum(body, 'service_tier', SERVICE_TIERS);
  checkStopConditions(body);
  checkRouteAndModalities(body, ['text', 'image', 'audio']);
  checkMetadata(body);
  checkSessionAndUser(body);
  checkChatOptionTypes(body);
  optString(body, 'model');
}

export function stopList(body: Body): string[] {
  const stop = body.stop;
  return typeof stop === 'string' ? [stop] : Array.isArray(stop) ? (stop as string[]) : [];
}

export function maxTokensOf(body: Body, field = 'max_completion_tokens'): number | undefined {
  return (body[field] as number | undefined) ?? (body.max_tokens as number | undefined) ?? undefined;
}

/** A model's behaviour, not an API rule: it answers at least 1 token, and asking for more than it can give is a 400 naming its limit. */
export function checkOutputLimit(model: ModelSpec, asked: number | null | undefined, field: string): void {
  if (typeof asked !== 'number') return;
  if (asked < 1) throw new HttpError(400, `${field} (${asked}): ${model.id} answers at least 1 token`, 'invalid_request');
  if (model.maxOutputTokens !== undefined && asked > model.maxOutputTokens) {
    throw new HttpError(400, `${field} (${asked}) exceeds the maximum output of ${model.id}: ${model.maxOutputTokens} tokens`, 'invalid_request');
  }
}

export interface ChatPlan {
  routed: Routed;
  gen: Generation;
  cost: ReturnType<typeof costOf>;
  /** Set when the answer is more than plain text (parts, tools, reasoning, images, a schema, citations). */
  rich?: RichMessage;
}

/** `at`: a request's `provider=` fault (one provider of the fake models failing) and the metadata asked (fake-route.ts). */
export function planChat(body: Body, at?: RouteAsk): ChatPlan {
  validateChat(body);
  const routed = route(body, 'chat', at);
  const messages = body.messages as Body[];
  const promptText = messages.map((m) => `${m.role}: ${textOf(m.content)}`).join('\n');
  const lastUser = textOf([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
  const maxTokens = maxTokensOf(body);
  checkOutputLimit(routed.model, maxTokens, body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens');
  const base = generate(routed.model, promptText, lastUser, { maxTokens, seed: body.seed, stop: stopList(body) });
  const fitted = fitAnswer((baseText) => richAnswer(body, routed.model, messages, baseText, lastUser), base, outputLimit(routed.model, maxTokens));
  const gen = fitted?.gen ?? base;
  // The stop sequence ended this answer unless a rich one says other words (a tool's result, a schema's) or is cut.
  keepStopHit(body.stop, base.stopSequence !== undefined && gen.finishReason === 'stop' && (!fitted || fitted.rich.content === base.text) ? base.stopSequence : undefined);
  return { routed, gen, rich: fitted?.rich, cost: costOf(routed.model, gen.promptTokens, gen.completionTokens) };
}

/** The usage object by its values (a shape jsonTemplate can fill: every value a parameter). */
const usageShape = (promptTokens: unknown, completionTokens: unknown, totalTokens: unknown, cost: unknown, promptCost: unknown, completionCost: unknown) => ({
  prompt_tokens: promptTokens,
  completion_tokens: completionTokens,
  total_tokens: totalTokens,
  cost,
  is_byok: false,
  prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0, audio_tokens: 0, file_tokens: 0, video_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, image_tokens: 0 },
  cost_details: {
    upstream_inference_cost: null,
    upstream_inference_prompt_cost: promptCost,
    upstream_inference_completions_cost: completionCost,
  },
});

const usageValues = ({ gen, cost }: ChatPlan) => [gen.promptTokens, gen.completionTokens, gen.promptTokens + gen.completionTokens, cost.cost, cost.prompt, cost.completion] as const;

/** The usage of an answer: a rich one says how many of its tokens were reasoning and images. */
export function chatUsage(plan: ChatPlan) {
  const usage = usageShape(...usageValues(plan));
  if (plan.rich) usage.completion_tokens_details = completionDetails(plan.rich);
  return usage;
}

function logprobsFor(text: string, top: number) {
  const rand = prng(seedOf(text));
  return {
    content: pieces(text).map((token) => {
      const logprob = -Math.round(rand() * 2000) / 1000;
      // The token chosen is the likeliest: the first of the top, with its own logprob; the others less likely.
      const alternatives = Array.from({ length: top }, (_, i) => ({ token: i === 0 ? token : `${token.trim()}${i}`, bytes: null, logprob: i === 0 ? logprob : Math.round((logprob - i - rand()) * 1000) / 1000 }));
      return { token, bytes: [...Buffer.from(token)], logprob, top_logprobs: alternatives };
    }),
    refusal: null,
  };
}

export const genId = (prefix = 'gen') => `${prefix}-${Math.floor(Date.now() / 1000)}-${randomHex(10)}`;

/** A chat completion by its values, in the order they appear in its JSON (see jsonTemplate). */
const completionShape = (id: unknown, created: unknown, model: unknown, provider: unknown, tier: unknown, content: unknown, finish: unknown, nativeFinish: unknown, logprobs: unknown, ...usage: unknown[]) => ({
  id,
  object: 'chat.completion',
  created,
  model,
  provider,
  system_fingerprint: null,
  service_tier: tier,
  choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, reasoning: null }, finish_reason: finish, native_finish_reason: nativeFinish, logprobs }],
  usage: usageShape(...(usage as Parameters<typeof usageShape>)),
});
const completionJSON = jsonTemplate(completionShape, 15);

function completionValues(body: Body, plan: ChatPlan, created: number, id: string) {
  const { routed, gen } = plan;
  const logprobs = body.logprobs ? logprobsFor(gen.text, (body.top_logprobs as number | undefined) ?? 0) : null;
  return [id, created, routed.model.id, routed.provider, servedTier(body.service_tier), gen.text, gen.finishReason, gen.finishReason, logprobs, ...usageValues(plan)] as const;
}

export function chatCompletion(body: Body, plan: ChatPlan, created: number, opts: { routerMetadata?: MetadataAsk; id?: string } = {}) {
  const out: Body = completionShape(...completionValues(body, plan, created, opts.id ?? genId()));
  if (plan.rich) {
    const choice = (out.choices as Body[])[0]!;
    Object.assign(choice, { message: richMessage(plan.rich), finish_reason: plan.rich.finishReason, native_finish_reason: plan.rich.finishReason });
    out.usage = chatUsage(plan);
  }
  Object.assign(out, metadataFields(plan.routed, 'chat', opts.routerMetadata, body));
  return out;
}

/** The JSON text of chatCompletion(...), the object never built (the answer of every non-streamed chat). */
export function chatCompletionText(body: Body, plan: ChatPlan, created: number, opts: { routerMetadata?: MetadataAsk; id?: string } = {}): string {
  if (asksMetadata(opts.routerMetadata) || plan.rich) return JSON.stringify(chatCompletion(body, plan, created, opts));
  return completionJSON(...completionValues(body, plan, created, opts.id ?? genId()));
}

/** validate.ts's limits that the bytes show before a parse (a million metadata keys take seconds to parse). */
export const METADATA_BEFORE_PARSE: BeforeParse = { metadata: { max: 16, of: 'object', message: 'metadata may hold at most 16 pairs' } };
const CHAT_BEFORE_PARSE: BeforeParse = { ...METADATA_BEFORE_PARSE, stop: { max: 4, of: 'array', message: 'stop may hold at most 4 sequences' } };

/** `POST /v1/chat/completions`, or a chat body another format's route made (`given`: messages.ts). */
export async function handleChat(ctx: Ctx, gateway?: ChatGateway, given?: Body): Promise<void> {
  const startedAt = ctx.store.now();
  const body: Body = given ?? (await ctx.json<Body>(CHAT_BEFORE_PARSE));
  if (gateway?.takes(body)) return gateway.chat(ctx, body);
  const sessionId = ctx.sessionId(body);
  const plan = planChat(body, { fault: ctx.fault, ask: ctx.wantsRouterMetadata(), api: 'chat' });
  const id = (ctx.generation = genId());
  ctx.servedBy = { model: plan.routed.model.id, provider: plan.routed.provider };
  // A stream's hold is settled at its end (given back after a kill -9 mid-stream); a whole answer's is its charge.
  const bill = body.stream === true ? await streamBill(ctx, plan.cost.cost, plan.gen.completionTokens, tokensOwed(plan.routed.model, plan.gen.promptTokens), chatEventTokens) : (await reserve(ctx, plan.cost.cost)) && undefined;
  const created = Math.floor(ctx.store.now() / 1000);
  // The answer's reasoning tokens (local/thinker's), as its usage says them: the generation says the same.
  const reasoningTokens = plan.rich ? completionDetails(plan.rich).reasoning_tokens : 0;
  const served = (streamed: boolean) => {
    const finishReason = plan.rich?.finishReason ?? plan.gen.finishReason;
    const { model, provider } = plan.routed;
    recordGeneration(ctx, { id, model: model.id, provider, apiType: 'completions', promptTokens: plan.gen.promptTokens, completionTokens: plan.gen.completionTokens, reasoningTokens, cost: plan.cost.cost, streamed, finishReason, startedAt, user: body.user, sessionId, serviceTier: servedTier(body.service_tier) });
    keepContent(ctx, id, plan.rich ? plan.rich.content : plan.gen.text, plan.rich?.reasoning ?? null);
  };
  if (!bill) {
    ctx.send(200, new Serialized(chatCompletionText(body, plan, created, { routerMetadata: ctx.wantsRouterMetadata(), id })), { 'x-generation-id': id });
    served(false);
    return;
  }
  const base = { id, object: 'chat.completion.chunk', created, model: plan.routed.model.id, provider: plan.routed.provider };
  const richParts = plan.rich ? richDeltas(plan.rich) : [];
  const finish = plan.rich?.finishReason ?? plan.gen.finishReason;
  const ask = ctx.wantsRouterMetadata();
  const metadata = asksMetadata(ask) ? metadataFields(plan.routed, 'chat', ask, body) : undefined;
  const textChunk = (content: string): Body => ({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null, native_finish_reason: null, logprobs: null }] });
  const textChunkJSON = jsonTemplate(textChunk, 1);
  function* events() {
    for (const [i, delta] of richParts.entries()) {
      yield { ...base, ...(i === 0 ? metadata : {}), choices: [{ index: 0, delta, finish_reason: null, native_finish_reason: null, logprobs: null }] };
    }
    // Made as they are sent: a slow reader holds what is written ahead of it, not the whole answer.
    let first = true;
    for (const part of plan.rich ? [] : piecesOf(plan.gen)) {
      if (first && metadata) yield { ...textChunk(part), ...metadata };
      else yield new Serialized(textChunkJSON(part));
      first = false;
    }
    yield { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: finish, native_finish_reason: finish, logprobs: null }] };
    // Always, as the deployed service does: its OpenAPI says stream_options.include_usage has no effect.
    yield { ...base, choices: [], usage: chatUsage(plan) };
  }
  const errorChunk = {
    ...base,
    error: { code: 502, message: 'Provider returned an error mid-stream', metadata: { error_type: 'provider_unavailable' } },
    choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error', logprobs: null }],
  };
  if (await writeSSE(ctx, events(), (plan.rich ? richParts.length : plan.gen.completionTokens) + 2, errorChunk, '[DONE]', undefined, bill.progress)) return served(true);
  // Ended early after content (a hang-up, a fault): the content written is paid for (docs/emulator.md).
  const cut = bill.cut();
  if (!cut) return;
  recordGeneration(ctx, { id, model: plan.routed.model.id, provider: plan.routed.provider, apiType: 'completions', promptTokens: plan.gen.promptTokens, completionTokens: cut.sent, reasoningTokens: Math.min(reasoningTokens, cut.sent), cost: cut.cost, streamed: true, finishReason: cut.cancelled ? null : 'error', cancelled: cut.cancelled, startedAt, user: body.user, sessionId, serviceTier: servedTier(body.service_tier) });
  keepContent(ctx, id, null, null, cut.cancelled ? undefined : { provider: plan.routed.provider });
}

export const chatRoutes = defineRoutes((parts: { gateway?: ChatGateway }) => [{ method: 'POST', path: '/v1/chat/completions', access: 'any', handler: (ctx) => handleChat(ctx, parts.gateway) }]);
