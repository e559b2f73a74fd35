import { randomHex } from '../http/ids.js';
import type { Ctx } from '../http/http.js';
import { costOf, countTokens, findModel, generate, outputLimit, piecesOf, type Generation } from '../models/models.js';
import { metadataFields, type MetadataAsk } from '../routing/routed.js';
import { METADATA_BEFORE_PARSE, checkOutputLimit, route } from './chat.js';
import { textOf } from '../models/content-text.js';
import { bad, checkMetadata, checkModelsList, checkRouteAndModalities, checkSessionAndUser, checkStopConditions, optEnum, optNumber, servedTier } from '../http/validate.js';
import { reserve, writeSSE } from '../state/billing.js';
import { responsesEventTokens, streamBill, tokensOwed } from './stream-bill.js';
import { checkResponsesOptionTypes } from '../http/option-types.js';
import { jsonTemplate, Serialized } from '../http/serialized.js';
import { richAnswer } from '../models/rich-answer.js';
import { fitAnswer } from '../models/rich-chat.js';
import { imageItem, leadingItemEvents, reasoningItem, reasoningOf } from '../models/responses-reasoning.js';
import { defineRoutes } from '../http/routes.js';
import { asChatMessages, functionCallEvents, functionCallItems } from '../models/responses-tools.js';
import { keepContent } from './generation-content.js';
import { recordGeneration } from './generations.js';
import { ResponseSoFar } from '../models/responses-so-far.js';
import type { ChatGateway } from '../providers/types.js';
import type { FaultRule } from '../http/faults.js';

type Body = Record<string, unknown>;

const SERVICE_TIERS = ['auto', 'default', 'fast', 'flex', 'priority', 'scale', null] as const;
const INCLUDES = ['file_search_call.results', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'reasoning.encrypted_content', 'code_interpreter_call.outputs'];

export function validateResponses(body: Body): void {
  checkModelsList(body);
  const input = body.input;
  if (typeof input !== 'string' && !Array.isArray(input)) bad('input must be a string or an array of input items');
  if (Array.isArray(input)) {
    input.forEach((item, i) => {
      if (!item || typeof item !== 'object' || Array.isArray(item)) bad(`input[${i}] must be an object`);
      // A message item carries role and content (the spec); the many other item kinds are not shown.
      const { type, role, content } = item as Body;
      if (type !== undefined && type !== 'message') return;
      if (typeof role !== 'string') bad(`input[${i}].role must be a string`);
      if (typeof content !== 'string' && !Array.isArray(content)) bad(`input[${i}].content must be a string or an array of parts`);
    });
  }
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    bad('previous_response_id is not supported: each request is independent; send the full history in input');
  }
  optNumber(body, 'temperature', 0, 2);
  optNumber(body, 'top_p', 0, 1);
  optNumber(body, 'max_output_tokens', -Infinity, Infinity, true);
  // At most 30 (no minimum is stated); ignored (so not checked) when stop conditions are set, as the spec says.
  if (body.stop_server_tools_when === undefined || body.stop_server_tools_when === null) optNumber(body, 'max_tool_calls', -Infinity, 30, true);
  optNumber(body, 'top_logprobs', 0, 20, true);
  optEnum(body, 'service_tier', SERVICE_TIERS);
  checkStopConditions(body);
  checkRouteAndModalities(body, ['text', 'image']);
  optEnum(body, 'truncation', ['auto', 'disabled', null]);
  if (body.include !== undefined) {
    if (!Array.isArray(body.include) || body.include.some((v) => !INCLUDES.includes(v as string))) bad(`include values must be among ${INCLUDES.join(', ')}`);
  }
  checkMetadata(body);
  checkSessionAndUser(body);
  checkResponsesOptionTypes(body);
}

function inputText(input: unknown): { prompt: string; lastUser: string } {
  if (typeof input === 'string') return { prompt: `user: ${input}`, lastUser: input };
  const items = input as Body[];
  const lines = items.map((it) => `${(it.role as string) ?? 'user'}: ${textOf(it.content)}`);
  const lastUser = [...items].reverse().find((it) => (it.role ?? 'user') === 'user');
  return { prompt: lines.join('\n'), lastUser: textOf(lastUser?.content) };
}

export function planResponses(body: Body, created: number, opts: { routerMetadata?: MetadataAsk; stream?: boolean; fault?: FaultRule } = {}) {
  validateResponses(body);
  const routed = route(body, 'chat', { fault: opts.fault, ask: opts.routerMetadata, api: 'responses' });
  const { prompt, lastUser } = inputText(body.input);
  const fullPrompt = typeof body.instructions === 'string' ? `system: ${body.instructions}\n${prompt}` : prompt;
  checkOutputLimit(routed.model, body.max_output_tokens as number | undefined, 'max_output_tokens');
  const generated = generate(routed.model, fullPrompt, lastUser, { maxTokens: body.max_output_tokens as number | undefined, seed: body.seed });
  // Parts, a text.format schema, the web plugin: the same answer as chat's, its text only (Responses' function tools have their own shape).
  const items = (typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input) as Body[];
  const called = functionCallItems(routed.model.id, body, items, lastUser);
  const limit = outputLimit(routed.model, body.max_output_tokens as number | undefined);
  const fitted = fitAnswer((baseText) => richAnswer({ ...body, tools: undefined }, routed.model, asChatMessages(items), baseText, lastUser), generated, limit);
  const rich = fitted?.rich;
  const answered: Generation = fitted?.gen ?? generated;
  // Function calls fit whole or not at all: an answer cut inside them is incomplete, with none.
  const callTokens = called ? countTokens(called.map((c) => c.arguments).join(' ')) : 0;
  const calls = callTokens <= limit ? called : undefined;
  const gen: Generation = called ? { text: '', finishReason: calls ? 'stop' : 'length', promptTokens: generated.promptTokens, completionTokens: calls ? callTokens : 0 } : answered;
  const cost = costOf(routed.model, gen.promptTokens, gen.completionTokens);
  const id = `resp_${randomHex(12)}`;
  const messageId = `msg_${randomHex(12)}`;
  const incomplete = gen.finishReason === 'length';
  // A stream fills the text in at its end (streamed, the answer is made as it is sent, not held).
  const text = opts.stream ? '' : gen.text;
  const message = {
    type: 'message',
    id: messageId,
    role: 'assistant',
    status: incomplete ? 'incomplete' : 'completed',
    content: [{ type: 'output_text', text, annotations: (rich?.annotations ?? []).map((a) => ({ type: a.type, ...(a.url_citation as Body) })), logprobs: [] }],
  };
  const result: Body = {
    id,
    object: 'response',
    created_at: created,
    completed_at: created,
    model: routed.model.id,
    status: incomplete ? 'incomplete' : 'completed',
    // local/thinker's reasoning and local/painter's images come first, as their own items.
    // local/tools' function calls are the whole answer: the caller runs them and asks again.
    output: calls ?? [...(rich?.reasoning ? [reasoningItem(rich.reasoning)] : []), ...(rich?.images ?? []).map((i) => imageItem(i.image_url.url, lastUser)), message],
    output_text: text,
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: (body.instructions as string | undefined) ?? null,
    metadata: (body.metadata as Body | undefined) ?? {},
    temperature: (body.temperature as number | undefined) ?? null,
    top_p: (body.top_p as number | undefined) ?? null,
    presence_penalty: (body.presence_penalty as number | undefined) ?? null,
    frequency_penalty: (body.frequency_penalty as number | undefined) ?? null,
    max_output_tokens: (body.max_output_tokens as number | undefined) ?? null,
    max_tool_calls: (body.max_tool_calls as number | undefined) ?? null,
    tools: (body.tools as unknown[] | undefined) ?? [],
    tool_choice: body.tool_choice ?? 'auto',
    parallel_tool_calls: (body.parallel_tool_calls as boolean | undefined) ?? true,
    previous_response_id: null,
    prompt: body.prompt ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    // Echoed as given; left out when not given (the schema's object has no null).
    ...(body.prompt_cache_options !== undefined && body.prompt_cache_options !== null ? { prompt_cache_options: body.prompt_cache_options } : {}),
    reasoning: body.reasoning ?? null,
    service_tier: servedTier(body.service_tier),
    text: body.text ?? { format: { type: 'text' } },
    truncation: body.truncation ?? 'disabled',
    store: false,
    background: false,
    safety_identifier: body.safety_identifier ?? null,
    user: body.user ?? null,
    usage: {
      input_tokens: gen.promptTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: gen.completionTokens,
      output_tokens_details: { reasoning_tokens: rich?.reasoning ? countTokens(rich.reasoning) : 0 },
      total_tokens: gen.promptTokens + gen.completionTokens,
      cost: cost.cost,
      is_byok: false,
      cost_details: { upstream_inference_cost: null, upstream_inference_input_cost: cost.prompt, upstream_inference_output_cost: cost.completion },
    },
  };
  Object.assign(result, metadataFields(routed, 'responses', opts.routerMetadata, body));
  return { result, cost: cost.cost, gen, messageId, calls, routed };
}

/** A gateway model none of whose providers has the Responses API (`responses: true`): 400 saying so, not "not a valid model ID". */
function refuseWithoutResponses(model: unknown, gateway: ChatGateway): void {
  if (typeof model !== 'string' || findModel(model)) return;
  if (!gateway.listing().some((m) => m.id === model)) return;
  bad(`${model} is served only by providers without the Responses API (none of them has responses: true); use /v1/chat/completions`);
}

async function handleResponses(ctx: Ctx, gateway?: ChatGateway): Promise<void> {
  const startedAt = ctx.store.now();
  const body = await ctx.json(METADATA_BEFORE_PARSE);
  if (gateway?.takesResponses(body)) return gateway.respond(ctx, body);
  if (gateway) refuseWithoutResponses(body.model, gateway);
  const sessionId = ctx.sessionId(body);
  const created = Math.floor(ctx.store.now() / 1000);
  const plan = planResponses(body, created, { routerMetadata: ctx.wantsRouterMetadata(), stream: body.stream === true, fault: ctx.fault });
  const { gen, routed } = plan;
  ctx.generation = plan.result.id as string;
  const reasoningTokens = (((plan.result.usage as Body).output_tokens_details as Body).reasoning_tokens as number) ?? 0;
  const served = (streamed: boolean, cut?: { sent: number; cost: number; cancelled: boolean }) => {
    recordGeneration(ctx, { id: plan.result.id as string, model: routed.model.id, provider: routed.provider, apiType: 'completions', promptTokens: gen.promptTokens, completionTokens: cut?.sent ?? gen.completionTokens, reasoningTokens: Math.min(reasoningTokens, cut?.sent ?? reasoningTokens), cost: cut?.cost ?? plan.cost, streamed, finishReason: cut ? (cut.cancelled ? null : 'error') : gen.finishReason, cancelled: !!cut?.cancelled, startedAt, user: body.safety_identifier ?? body.user, sessionId, serviceTier: servedTier(body.service_tier) });
    keepContent(ctx, plan.result.id as string, cut ? null : ((plan.result.output_text as string | undefined) ?? null), cut ? null : reasoningOf(plan.result), cut && !cut.cancelled ? { provider: routed.provider } : undefined);
  };
  if (body.stream !== true) {
    await reserve(ctx, plan.cost);
    ctx.send(200, plan.result, { 'x-generation-id': plan.result.id as string });
    served(false);
    return;
  }
  // Held until its end; a caller who hangs up after content pays for what was written (stream-bill.ts).
  const bill = await streamBill(ctx, plan.cost, gen.completionTokens, tokensOwed(routed.model, gen.promptTokens), responsesEventTokens);
  const ended = (delivered: boolean) => {
    if (delivered) return served(true);
    const cut = bill.cut();
    if (cut) served(true, cut);
  };
  const { events, count, failed } = responseEvents(plan);
  ended(await writeSSE(ctx, events, count, failed, undefined, (e) => (e as Body).type as string, bill.progress));
}

/**
 * A fake model's answer as a stream's events, in order (each with its `sequence_number`; the text deltas
 * already in JSON), how many, and the `response.failed` a stream cut short after `sent` events ends with,
 * its output what those events sent (the events made again: a failure is rare, the text never held).
 * Made as they are taken: the text is filled in at the end, not held while the stream runs.
 */
export function responseEvents(plan: ReturnType<typeof planResponses>): { events: Iterable<Body | Serialized>; count: number; failed: (sent: number) => Body } {
  const { result, messageId } = plan;
  const { usage: _usage, ...rest } = result;
  // Usage is known only at the end: an in-progress response leaves it out (the schema has no null for it).
  const pending = { ...rest, status: 'in_progress', completed_at: null, output: [], output_text: '' };
  const failedAfter = (made: Iterable<Body | Serialized>) => (sent: number) => {
    const soFar = new ResponseSoFar();
    let i = 0;
    for (const e of made) {
      if (i++ >= sent) break;
      soFar.add(e instanceof Serialized ? (JSON.parse(e.json) as Body) : e);
    }
    const error = { code: 'server_error', message: 'Provider returned an error mid-stream', error_type: 'provider_unavailable' };
    return { type: 'response.failed', sequence_number: sent, response: { ...pending, status: 'failed', output: soFar.output(), output_text: soFar.text(), error } };
  };
  if (plan.calls) {
    const events = [{ type: 'response.created', response: pending }, { type: 'response.in_progress', response: pending }, ...functionCallEvents(plan.calls, 0), { type: 'response.completed', response: result }];
    const numbered = events.map((e, sequence_number) => ({ ...e, sequence_number }));
    return { events: numbered, count: events.length, failed: failedAfter(numbered) };
  }
  const output = result.output as Body[];
  const item = output[output.length - 1]!;
  const at = output.length - 1;
  const head: Body[] = [
    { type: 'response.created', response: pending },
    { type: 'response.in_progress', response: pending },
    ...output.slice(0, at).flatMap((leading, i) => leadingItemEvents(leading, i)),
    { type: 'response.output_item.added', output_index: at, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', item_id: messageId, output_index: at, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
  ];
  const tail = (text: string): Body[] => {
    result.output_text = (item.content as Body[])[0]!.text = text;
    return [
      { type: 'response.output_text.done', item_id: messageId, output_index: at, content_index: 0, text, logprobs: [] },
      { type: 'response.content_part.done', item_id: messageId, output_index: at, content_index: 0, part: (item.content as Body[])[0] },
      { type: 'response.output_item.done', output_index: at, item },
      { type: result.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response: result },
    ];
  };
  const count = head.length + plan.gen.completionTokens + 4;
  const deltaJSON = jsonTemplate((delta, sequence_number) => ({ type: 'response.output_text.delta', item_id: messageId, output_index: at, content_index: 0, delta, logprobs: [], sequence_number }), 2);
  function* events(): Generator<Body | Serialized> {
    let sequence_number = 0;
    for (const e of head) yield { ...e, sequence_number: sequence_number++ };
    for (const delta of piecesOf(plan.gen)) yield new Serialized(deltaJSON(delta, sequence_number++), 'response.output_text.delta');
    // Made again at the end (local/lorem from its seed) rather than held while the stream runs.
    for (const e of tail(plan.gen.text)) yield { ...e, sequence_number: sequence_number++ };
  }
  return { events: events(), count, failed: (sent) => failedAfter(events())(sent) };
}

export const responsesRoutes = defineRoutes((parts: { gateway?: ChatGateway }) => [{ method: 'POST', path: '/v1/responses', access: 'any', handler: (ctx) => handleResponses(ctx, parts.gateway) }]);
