import type { Ctx } from './http.js';
import { costOf, countTokens, prng, seedOf } from './models.js';
import { bad, optEnum, optNumber, optString, pickProvider, resolveModel } from './validate.js';
import { reserve } from './billing.js';
import { HttpError } from './http.js';
import { genId } from './chat.js';

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

function inputsOf(input: unknown, strict: boolean): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input)) {
    if (input.length === 0) bad('input must not be empty');
    if (input.every((x) => typeof x === 'number')) return [JSON.stringify(input)];
    return input.map((item, i) => {
      if (typeof item === 'string') return item;
      if (Array.isArray(item) && item.every((x) => typeof x === 'number')) return JSON.stringify(item);
      if (!strict && item && typeof item === 'object') return JSON.stringify(item);
      return bad(`input[${i}] must be a string or an array of token ids`);
    });
  }
  return bad('input is required: a string, an array of strings or token arrays');
}

/** local/embed's own limit (a model's, not the API's). */
const MAX_EMBEDDING_DIMENSIONS = 65_536;

export function planEmbeddings(body: Body, opts: { batch?: boolean } = {}) {
  const model = resolveModel(body.model, 'embedding');
  // At least 1 (spec); the upper bound is the model's own (model behaviour, named in the message).
  const dims = optNumber(body, 'dimensions', 1, Infinity, true) ?? model.dimensions!;
  if (dims > MAX_EMBEDDING_DIMENSIONS) bad(`${model.id} gives at most ${MAX_EMBEDDING_DIMENSIONS} dimensions, not ${dims}`);
  const format = optEnum(body, 'encoding_format', ['float', 'base64']) ?? 'float';
  optString(body, 'user');
  if (body.input_type !== undefined && typeof body.input_type !== 'string') bad('input_type must be a string');
  if (opts.batch && (body.input_type !== undefined || body.provider !== undefined)) bad('input_type and provider are not supported in batches');
  const inputs = inputsOf(body.input, !!opts.batch);
  const provider = pickProvider(model, body.provider);
  if (!provider) throw new HttpError(404, 'No endpoints found matching your provider preferences', 'not_found');
  const tokens = inputs.reduce((n, s) => n + countTokens(s), 0);
  const cost = costOf(model, tokens, 0);
  const response = {
    object: 'list',
    id: genId('emb'),
    model: model.id,
    provider,
    data: inputs.map((text, index) => {
      const v = embedText(text, dims);
      return {
        object: 'embedding',
        index,
        embedding: format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v,
      };
    }),
    usage: { prompt_tokens: tokens, total_tokens: tokens, cost: cost.cost },
  };
  return { response, cost: cost.cost };
}

export async function handleEmbeddings(ctx: Ctx): Promise<void> {
  const body = await ctx.json();
  const plan = planEmbeddings(body);
  reserve(ctx, plan.cost);
  ctx.send(200, plan.response);
}
