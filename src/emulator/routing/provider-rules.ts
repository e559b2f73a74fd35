import { bad } from '../http/validate.js';
import { HttpError } from '../http/http.js';
import { MODELS, type ModelSpec } from '../models/models.js';
import { PARAMETER_NAMES, UPSTREAM_CHAT_PARAMETERS } from '../models/parameters.js';
import { listedModel } from '../resources/model-list.js';
import type { ProviderModel } from '../providers/types.js';

type Body = Record<string, unknown>;
/** A candidate as the rules read it (candidates.ts's Candidate, which imports this file). */
type Endpoint = { slug: string; model: ProviderModel; listed?: { prompt: number; completion: number } };

/**
 * The `provider` preferences that pass an endpoint over before any is asked (the OpenAPI's
 * ProviderPreferences): what a request uses that an endpoint does not take, prices over `max_price`,
 * data policies and quantizations the gateway cannot vouch for an upstream keeps.
 */
export interface Rules {
  /** The parameters the request uses, when `require_parameters: true`. */
  used?: string[];
  maxPrice?: { prompt?: number; completion?: number };
  quantizations?: string[];
  /** `data_collection: "deny"`, `zdr: true`, `enforce_distillable_text: true`: named as asked. */
  policies: string[];
}

const QUANTIZATIONS = ['int4', 'int8', 'fp4', 'mxfp4', 'nvfp4', 'fp6', 'fp8', 'mxfp8', 'fp16', 'bf16', 'fp32', 'unknown'];

export function rulesOf(body: Body, kind: string): Rules | undefined {
  const p = body.provider as Body | null | undefined;
  if (!p || typeof p !== 'object' || Array.isArray(p)) return undefined;
  const rules: Rules = { policies: [] };
  if (p.require_parameters !== undefined && p.require_parameters !== null) {
    if (typeof p.require_parameters !== 'boolean') bad('provider.require_parameters must be a boolean');
    if (p.require_parameters && kind === 'chat') rules.used = usedParameters(body);
  }
  if (p.max_price !== undefined && p.max_price !== null) rules.maxPrice = maxPriceOf(p.max_price);
  if (p.quantizations !== undefined && p.quantizations !== null) {
    if (!Array.isArray(p.quantizations) || p.quantizations.some((q) => !QUANTIZATIONS.includes(q as string))) bad(`provider.quantizations must be an array of ${QUANTIZATIONS.join(', ')}`);
    rules.quantizations = p.quantizations as string[];
  }
  if (p.data_collection !== undefined && p.data_collection !== null && p.data_collection !== 'allow' && p.data_collection !== 'deny') bad('provider.data_collection must be one of allow, deny');
  if (p.enforce_distillable_text !== undefined && p.enforce_distillable_text !== null && typeof p.enforce_distillable_text !== 'boolean') bad('provider.enforce_distillable_text must be a boolean');
  if (p.data_collection === 'deny') rules.policies.push('provider.data_collection: "deny"');
  if (p.zdr === true) rules.policies.push('provider.zdr: true');
  if (p.enforce_distillable_text === true) rules.policies.push('provider.enforce_distillable_text: true');
  return rules.used || rules.maxPrice || rules.quantizations || rules.policies.length ? rules : undefined;
}

/** `max_price`: USD per million tokens (strings in the OpenAPI, numbers taken too); `request`, `image`, `audio` checked, never charged here. */
function maxPriceOf(raw: unknown): Rules['maxPrice'] {
  if (typeof raw !== 'object' || Array.isArray(raw)) bad('provider.max_price must be an object');
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(raw as Body)) {
    if (!['prompt', 'completion', 'request', 'image', 'audio'].includes(key)) bad(`provider.max_price: unknown key ${JSON.stringify(key)} (known: prompt, completion, request, image, audio)`);
    const n = typeof value === 'string' && value.trim() ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) bad(`provider.max_price.${key} must be a number of USD from 0`);
    out[key] = n;
  }
  return { prompt: out.prompt, completion: out.completion };
}

const PARAMETERS = new Set(PARAMETER_NAMES);

/**
 * The model list's parameter names a request uses: its members of those names, set (not null, not an empty list); a `json_schema`
 * response format needs `structured_outputs` too. A Responses request's `max_output_tokens` is `max_tokens`,
 * its `text.format` a response format and `text.verbosity` verbosity.
 */
export function usedParameters(body: Body): string[] {
  const used = new Set<string>();
  // An empty list (`tools: []`, `stop: []`) asks nothing of the model.
  for (const [key, value] of Object.entries(body)) if (value !== undefined && value !== null && !(Array.isArray(value) && !value.length) && PARAMETERS.has(key)) used.add(key);
  const responses = body.messages === undefined && body.input !== undefined;
  const text = responses ? (body.text as Body | null | undefined) : undefined;
  if (responses && body.max_output_tokens !== undefined && body.max_output_tokens !== null) used.add('max_tokens');
  if (text?.verbosity !== undefined && text.verbosity !== null) used.add('verbosity');
  const format = (responses ? text?.format : body.response_format) as Body | null | undefined;
  if (format?.type !== undefined && format.type !== 'text') used.add('response_format');
  if (format?.type === 'json_schema') used.add('structured_outputs');
  return PARAMETER_NAMES.filter((p) => used.has(p));
}

/** What the model list says an endpoint takes: a fake model's own list, else the providers file's, else UPSTREAM_CHAT_PARAMETERS. */
function takes(c: Endpoint, local: boolean): string[] {
  if (!local) return c.model.parameters ?? UPSTREAM_CHAT_PARAMETERS;
  const spec = MODELS.find((m) => m.id === c.model.id);
  return spec ? (listedModel(spec).supported_parameters as string[]) : [];
}

const perMillion = (perToken: number) => Math.round(perToken * 1e6 * 1e6) / 1e6;

/** Why a candidate is passed over under `rules` (`parameters` when only for what the request uses), or undefined when it qualifies. */
export function whyNot(c: Endpoint, rules: Rules, local: boolean): { rule: 'parameters' | 'preferences'; why: string } | undefined {
  if (rules.used) {
    const taken = takes(c, local);
    const missing = rules.used.filter((p) => !taken.includes(p));
    if (missing.length) return { rule: 'parameters', why: `${c.slug}: ${c.model.id} does not take ${missing.join(', ')} (provider.require_parameters)` };
  }
  const prices = c.model.prices ?? (local ? c.listed : undefined);
  for (const side of ['prompt', 'completion'] as const) {
    const most = rules.maxPrice?.[side];
    if (most === undefined) continue;
    if (!prices) return { rule: 'preferences', why: `${c.slug}: ${c.model.id} has no configured price (its upstream's cost is charged), so provider.max_price cannot hold` };
    if (perMillion(prices[side]) > most) return { rule: 'preferences', why: `${c.slug}: ${c.model.id} costs ${perMillion(prices[side])} USD per million ${side} tokens, over provider.max_price.${side} ${most}` };
  }
  if (rules.quantizations && !rules.quantizations.includes('unknown')) return { rule: 'preferences', why: `${c.slug}: ${c.model.id} has no known quantization (provider.quantizations names ${rules.quantizations.join(', ')}, not unknown)` };
  if (rules.policies.length && !local) return { rule: 'preferences', why: `${c.slug}: the gateway cannot vouch for its upstream under ${rules.policies.join(', ')}` };
  return undefined;
}

type Ruled = NonNullable<ReturnType<typeof whyNot>>;

const NO_ENDPOINTS = 'No endpoints found matching your provider preferences';
/** The service's words when `provider.require_parameters` leaves no endpoint. */
const NO_PARAMETERS = 'No endpoints found that can handle the requested parameters';

/** The 404 when rules passed every endpoint over, each named with why: the service's words for parameters when only they did. */
export function ruledOut(ruled: Ruled[]): HttpError {
  return new HttpError(404, `${ruled.every((r) => r.rule === 'parameters') ? NO_PARAMETERS : NO_ENDPOINTS}: ${ruled.map((r) => r.why).join('; ')}`, 'not_found');
}

/**
 * Whether every model's endpoints are sorted together by price: `provider.sort` by price with
 * `partition: "none"`, or the deprecated `route: "sort"` (its alias).
 */
export function priceSortedTogether(body: Body): boolean {
  const sort = (body.provider as Body | null | undefined)?.sort;
  const by = typeof sort === 'string' ? sort : (sort as Body | null | undefined)?.by;
  const partition = (sort as Body | null | undefined)?.partition ?? (body.route === 'sort' ? 'none' : undefined);
  return by === 'price' && partition === 'none';
}

/** A fake route's models, the cheapest first when sorted together (an id that names no model keeps its place at the end). */
export function cheapestFirst<T extends object>(body: Body, models: T[]): T[] {
  if (!priceSortedTogether(body)) return models;
  const price = (m: T) => ('promptPrice' in m ? (m as unknown as ModelSpec).promptPrice + (m as unknown as ModelSpec).completionPrice : Infinity);
  return [...models].sort((a, b) => price(a) - price(b));
}
