import type { Ctx } from '../http/http.js';
import { costOf, countTokens, prng, seedOf } from '../models/models.js';
import { bad, checkModelsList, optEnum, optNumber, optString } from '../http/validate.js';
import { reserve } from '../state/billing.js';
import { genId, route } from './chat.js';
import { metadataFields, type RouteAsk } from '../routing/routed.js';
import { Serialized } from '../http/serialized.js';
import { defineRoutes } from '../http/routes.js';
import type { ChatGateway } from '../providers/types.js';
import { recordGeneration } from './generations.js';
import { batchEmbeddingsProblem, inputsOf } from './embedding-input.js';

type Body = Record<string, unknown>;

/** Unit-norm vector, the same for the same text and dimension. */
export function embedText(text: string, dims: number): number[] {
  const rand = prng(seedOf('embed', text, dims));
  const v = new Array<number>(dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    // Box-Muller: normal components give directions spread evenly on the sphere.
    const x = Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
    v[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dims; i++) v[i] = v[i]! / norm;
  return v;
}

const isTokenArray = (x: unknown): x is number[] => Array.isArray(x) && x.every((id) => typeof id === 'number');

/** The prompt tokens of an (already checked) input: a token array is its ids, a text as the tokenizer counts it. */
export function inputTokens(input: unknown): number {
  const items = typeof input === 'string' || isTokenArray(input) ? [input] : (input as unknown[]);
  return items.reduce<number>((n, item) => n + (isTokenArray(item) ? item.length : countTokens(typeof item === 'string' ? item : JSON.stringify(item))), 0);
}

/** local/embed's own limits (a model's, not the API's): dimensions, inputs (as OpenAI's), numbers per answer. */
const MAX_EMBEDDING_DIMENSIONS = 65_536;
const MAX_INPUTS = 2048;
const MAX_NUMBERS = 1_048_576;

type EmbeddingPlan = ReturnType<typeof checkEmbeddings>;

/** The request's checks and its cost: everything but the vectors. `at`: a request's `provider=` fault and the metadata asked (fake-route.ts). */
function checkEmbeddings(body: Body, opts: { batch?: boolean; at?: RouteAsk }) {
  // `model`, then the `models` fallbacks in order, as chat's and the gateway's (routing/embed.ts).
  checkModelsList(body);
  const routed = route(body, 'embedding', opts.at);
  const { model, provider } = routed;
  // At least 1 (spec); the upper bound is the model's own (model behaviour, named in the message).
  const dims = optNumber(body, 'dimensions', 1, Infinity, true) ?? model.dimensions!;
  if (dims > MAX_EMBEDDING_DIMENSIONS) bad(`${model.id} gives at most ${MAX_EMBEDDING_DIMENSIONS} dimensions, not ${dims}`);
  const format = optEnum(body, 'encoding_format', ['float', 'base64']) ?? 'float';
  optString(body, 'user');
  optString(body, 'session_id', 256);
  if (body.input_type !== undefined && typeof body.input_type !== 'string') bad('input_type must be a string');
  const batchProblem = opts.batch && batchEmbeddingsProblem(body);
  if (batchProblem) bad(batchProblem);
  const inputs = inputsOf(body.input, !!opts.batch);
  if (inputs.length > MAX_INPUTS) bad(`${model.id} takes at most ${MAX_INPUTS} inputs per request, not ${inputs.length}`);
  if (inputs.length * dims > MAX_NUMBERS) {
    bad(`${model.id} answers at most ${MAX_NUMBERS} numbers per request (inputs x dimensions): ${inputs.length} x ${dims} is ${inputs.length * dims}`);
  }
  const tokens = inputTokens(body.input);
  return { model, dims, format, inputs, provider, routed, tokens, cost: costOf(model, tokens, 0).cost };
}

function item(plan: EmbeddingPlan, index: number) {
  const v = embedText(plan.inputs[index]!, plan.dims);
  return { object: 'embedding', index, embedding: plan.format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v };
}

/** The answer, with its data left to fill in. */
function answer(plan: EmbeddingPlan, data: unknown) {
  return { object: 'list', id: genId('emb'), model: plan.model.id, provider: plan.provider, data, usage: { prompt_tokens: plan.tokens, total_tokens: plan.tokens, cost: plan.cost } };
}

/** One value per input, made a slice at a time: a large answer never stalls the other clients. */
async function perInput<T>(plan: EmbeddingPlan, make: (index: number) => T): Promise<T[]> {
  const out: T[] = [];
  let numbers = 0;
  for (let i = 0; i < plan.inputs.length; i++) {
    out.push(make(i));
    numbers += plan.dims;
    if (numbers >= 32_768) {
      numbers = 0;
      await new Promise((r) => setImmediate(r));
    }
  }
  return out;
}

/** A batch item's answer. */
export async function planEmbeddings(body: Body, opts: { batch?: boolean; at?: RouteAsk } = {}) {
  const plan = checkEmbeddings(body, opts);
  return { response: answer(plan, await perInput(plan, (i) => item(plan, i))), cost: plan.cost };
}

async function handleEmbeddings(ctx: Ctx, gateway?: ChatGateway): Promise<void> {
  const startedAt = ctx.store.now();
  const body = await ctx.json();
  if (gateway?.takesEmbeddings(body)) return gateway.embed(ctx, body);
  const sessionId = ctx.sessionId(body);
  const plan = checkEmbeddings(body, { at: { fault: ctx.fault, ask: ctx.wantsRouterMetadata(), api: 'embeddings' } });
  const head = Object.assign(answer(plan, 0), metadataFields(plan.routed, 'embeddings', ctx.wantsRouterMetadata()));
  ctx.generation = head.id;
  ctx.servedBy = { model: plan.model.id, provider: plan.provider };
  await reserve(ctx, plan.cost);
  const [before, after] = JSON.stringify(head).split('"data":0');
  const data = await perInput(plan, (i) => JSON.stringify(item(plan, i)));
  ctx.send(200, new Serialized(`${before}"data":[${data.join(',')}]${after}`), { 'x-generation-id': head.id });
  recordGeneration(ctx, { id: head.id, model: plan.model.id, provider: plan.provider, apiType: 'embeddings', promptTokens: plan.tokens, completionTokens: 0, cost: plan.cost, streamed: false, finishReason: null, startedAt, user: body.user, sessionId });
}

export const embeddingsRoutes = defineRoutes((parts: { gateway?: ChatGateway }) => [{ method: 'POST', path: '/v1/embeddings', access: 'any', handler: (ctx) => handleEmbeddings(ctx, parts.gateway) }]);
