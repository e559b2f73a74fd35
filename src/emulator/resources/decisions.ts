import { randomHex } from '../http/ids.js';
import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { costOf, countTokens, prng, seedOf, round } from '../models/models.js';
import { bad, checkSessionAndUser, pickProvider, resolveModel } from '../http/validate.js';
import { reserve } from '../state/billing.js';
import { optObject } from '../http/option-types.js';
import { defineRoutes } from '../http/routes.js';
import { recordGeneration } from './generations.js';
import type { Flavor } from '../batches/batch-flavor.js';

type Body = Record<string, unknown>;

/** How concentrated a distribution is: 0 for uniform, 1 for all mass on one option. */
export function confidenceOf(probabilities: number[]): number {
  const k = probabilities.length;
  if (k < 2) return 1;
  const max = Math.max(...probabilities);
  return round(Math.min(1, Math.max(0, (max - 1 / k) / (1 - 1 / k))));
}

/** Deterministic probabilities over k options, rounded to two decimals, summing to exactly 1. */
function distribution(seed: number, k: number): number[] {
  const rand = prng(seed);
  const logits = Array.from({ length: k }, () => rand() * 4);
  const exps = logits.map((l) => Math.exp(l));
  const sum = exps.reduce((a, b) => a + b, 0);
  const cents = exps.map((e) => Math.floor((e / sum) * 100));
  let left = 100 - cents.reduce((a, b) => a + b, 0);
  const order = exps.map((e, i) => [e / sum * 100 - cents[i]!, i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of order) if (left-- > 0) cents[i]! += 1;
  return cents.map((c) => c / 100);
}

/** local/judge's own limits (a model's, not the API's): questions per request, options or levels per question. */
const MAX_QUESTIONS = 1000;
const MAX_OPTIONS = 100;

/**
 * What a question's instructions and each criterion may be. api.md: a string. The deployed service
 * (its SDK's schemas, the deployment notes): a string, a JSON object or an array, and a choice's
 * option may have no description (null).
 */
type Check = (v: unknown) => boolean;
const isText: Check = (v) => typeof v === 'string';
const isRich: Check = (v) => typeof v === 'string' || (!!v && typeof v === 'object');
const TEXTS = {
  spec: { instructions: isText, criterion: isText, option: isText, words: 'a string', criterionWords: 'a description string' },
  deployed: { instructions: isRich, criterion: isRich, option: (v: unknown) => v === null || isRich(v), words: 'a string, a JSON object or an array', criterionWords: 'a string, a JSON object or an array' },
};

function checkQuestion(key: string, q: unknown, flavor: Flavor): Body {
  const texts = TEXTS[flavor];
  if (!q || typeof q !== 'object' || Array.isArray(q)) bad(`questions.${key} must be an object`);
  const { type, instructions, criteria } = q as Body;
  if (!texts.instructions(instructions)) bad(`questions.${key}.instructions must be ${texts.words}`);
  const descriptions = (entries: [string, unknown][], ok: Check = texts.criterion) => {
    for (const [k, v] of entries) if (!ok(v)) bad(`questions.${key}.criteria${/^\d+$/.test(k) && Array.isArray(criteria) ? `[${k}]` : `.${k}`} must be ${texts.criterionWords}`);
  };
  if (type === 'noul') {
    // The criteria of a yes/no question may be left out (the spec shows no rule for it): yes and no need no description.
    if (criteria !== undefined) {
      const keys = criteria && typeof criteria === 'object' && !Array.isArray(criteria) ? Object.keys(criteria).sort() : [];
      if (keys.join(',') !== 'false,true') bad(`questions.${key}.criteria of a noul question has exactly the keys "true" and "false"`);
      descriptions(Object.entries(criteria as Body));
    }
  } else if (type === 'choice') {
    if (!criteria || typeof criteria !== 'object' || Array.isArray(criteria)) bad(`questions.${key}.criteria of a choice question maps each option to a description`);
    const entries = Object.entries(criteria as Body);
    if (entries.length < 1) bad(`questions.${key}.criteria needs at least 1 option`);
    if (entries.length > MAX_OPTIONS) bad(`questions.${key}.criteria: at most ${MAX_OPTIONS} options, not ${entries.length}`);
    descriptions(entries, texts.option);
  } else if (type === 'score') {
    if (!Array.isArray(criteria) || criteria.length < 1) bad(`questions.${key}.criteria of a score question is an ordered array of levels`);
    if (criteria.length > MAX_OPTIONS) bad(`questions.${key}.criteria: at most ${MAX_OPTIONS} levels, not ${criteria.length}`);
    descriptions(Object.entries(criteria));
  } else {
    bad(`questions.${key}.type must be noul, choice or score`);
  }
  return q as Body;
}

export function planDecision(body: Body, flavor: Flavor = 'spec') {
  const model = resolveModel(body.model, 'decision');
  const state = body.state;
  if (state === undefined || state === null || !(typeof state === 'string' || typeof state === 'object')) bad('state is required: a string, or a JSON object or array');
  const questions = body.questions;
  if (!questions || typeof questions !== 'object' || Array.isArray(questions) || Object.keys(questions).length === 0) bad('questions must be an object with at least one question');
  const count = Object.keys(questions).length;
  if (count > MAX_QUESTIONS) bad(`${model.id} answers at most ${MAX_QUESTIONS} questions per request, not ${count}`);
  checkSessionAndUser(body, Infinity);
  optObject(body, 'trace');
  const provider = pickProvider(model, body.provider);
  if (!provider) throw new HttpError(404, 'No endpoints found matching your provider preferences', 'not_found');
  const stateText = typeof state === 'string' ? state : JSON.stringify(state);
  // The state is hashed once, not once per question (it can be megabytes).
  const stateSeed = seedOf(stateText);
  const answers: Record<string, Body> = {};
  for (const [key, raw] of Object.entries(questions as Body)) {
    const q = checkQuestion(key, raw, flavor);
    const seed = seedOf(stateSeed, key, q.instructions, q.criteria ?? null);
    if (q.type === 'noul') {
      answers[key] = { type: 'noul', noul: distribution(seed, 2)[0]! };
    } else if (q.type === 'choice') {
      const keys = Object.keys(q.criteria as Body);
      const p = distribution(seed, keys.length);
      const best = p.indexOf(Math.max(...p));
      answers[key] = { type: 'choice', choice: keys[best], confidence: confidenceOf(p), probabilities: Object.fromEntries(keys.map((k, i) => [k, p[i]])) };
    } else {
      const levels = q.criteria as unknown[];
      const p = distribution(seed, levels.length);
      answers[key] = {
        type: 'score',
        score: round(p.reduce((s, pi, i) => s + pi * i, 0)),
        confidence: confidenceOf(p),
        legend: Object.fromEntries(levels.map((c, i) => [String(i), c])),
        probabilities: Object.fromEntries(p.map((pi, i) => [String(i), pi])),
      };
    }
  }
  const inputTokens = countTokens(`${stateText} ${JSON.stringify(questions)}`);
  const outputTokens = Object.keys(answers).length * 3;
  const cost = costOf(model, inputTokens, outputTokens).cost;
  return {
    cost,
    response: {
      id: `gen-dec-${randomHex(10)}`,
      model: `${model.id}-20261101`,
      provider,
      answers,
      usage: { input_tokens: inputTokens, output_tokens: outputTokens, cost },
    },
  };
}

/** The deployment notes: on `/v1/systemone`, a bare model id such as `jev-1.13` is TypeSafe's, `typesafe/jev-1.13`. */
function systemOneModel(body: Body): Body {
  return typeof body.model === 'string' && body.model !== '' && !body.model.includes('/') ? { ...body, model: `typesafe/${body.model}` } : body;
}

async function handleDecision(ctx: Ctx, flavor: Flavor, systemOne = false): Promise<void> {
  const startedAt = ctx.store.now();
  const asked = await ctx.json();
  const body = systemOne ? systemOneModel(asked) : asked;
  const sessionId = ctx.sessionId(body);
  const plan = planDecision(body, flavor);
  ctx.generation = plan.response.id;
  await reserve(ctx, plan.cost);
  ctx.send(200, plan.response, { 'x-generation-id': plan.response.id });
  const { id, model, provider, usage } = plan.response;
  recordGeneration(ctx, { id, model, provider: String(provider), apiType: 'completions', promptTokens: usage.input_tokens, completionTokens: usage.output_tokens, cost: plan.cost, streamed: false, finishReason: 'stop', startedAt, user: body.user, sessionId });
}

/** Deployed, also at `/v1/systemone` (the SDK's System One call: the same request and answer). */
export const decisionRoutes = defineRoutes(({ flavor }: { flavor: Flavor }) => [
  { method: 'POST', path: '/alpha/decisions', access: 'management', handler: (ctx) => handleDecision(ctx, flavor) },
  ...(flavor === 'deployed' ? [{ method: 'POST' as const, path: '/v1/systemone', access: 'management' as const, handler: (ctx: Ctx) => handleDecision(ctx, flavor, true) }] : []),
]);
