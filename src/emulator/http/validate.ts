import { HttpError } from './http.js';
import { MODEL_ID_PATTERN, PROVIDERS, findModel, type ModelKind, type ModelSpec } from '../models/models.js';
import { notAModelOfKind } from '../models/model-kind-words.js';
import type { Named } from '../routing/provider-choice.js';
import { didYouMean } from '../../internal/did-you-mean.js';

type Body = Record<string, unknown>;

export function bad(message: string): never {
  throw new HttpError(400, message, 'invalid_request');
}

export function optNumber(body: Body, field: string, min: number, max: number, integer = false): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${field} must be a number`);
  if (integer && !Number.isInteger(v)) bad(`${field} must be an integer`);
  if (v < min || v > max) {
    bad(`${field} must be ${max === Infinity ? `at least ${min}` : min === -Infinity ? `at most ${max}` : `between ${min} and ${max}`}`);
  }
  return v;
}

export function optString(body: Body, field: string, maxLength = Infinity): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') bad(`${field} must be a string`);
  if (v.length > maxLength) bad(`${field} must be at most ${maxLength} characters`);
  return v;
}

export function optEnum<T extends string>(body: Body, field: string, values: readonly (T | null)[]): T | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!values.includes(v as T)) bad(`${field} must be one of ${values.filter(Boolean).join(', ')}`);
  return v as T;
}

export function checkMetadata(body: Body): void {
  const m = body.metadata;
  if (m === undefined || m === null) return;
  if (typeof m !== 'object' || Array.isArray(m)) bad('metadata must be an object of strings');
  const entries = Object.entries(m as Body);
  if (entries.length > 16) bad('metadata may hold at most 16 pairs');
  for (const [k, v] of entries) {
    if (k.length > 64) bad(`metadata key "${k.slice(0, 20)}..." is longer than 64 characters`);
    if (/[[\]]/.test(k)) bad(`metadata key "${k}" must not contain brackets`);
    if (typeof v !== 'string') bad(`metadata value of "${k}" must be a string`);
    if (v.length > 512) bad(`metadata value of "${k}" is longer than 512 characters`);
  }
}

/**
 * Session id: at most 256 characters wherever the spec names it. The end-user identifier `user` has
 * that limit on chat and Responses only (decisions name none); Responses' recommended abuse-isolation
 * identifier (`safety_identifier`) has no limit.
 */
export function checkSessionAndUser(body: Body, userLimit = 256): void {
  optString(body, 'session_id', 256);
  optString(body, 'user', userLimit);
  optString(body, 'safety_identifier');
}

/** Resolves a model id of the wanted kind: 400 for a malformed or unknown id. */
export function resolveModel(id: unknown, kind: ModelKind, fallback?: string): ModelSpec {
  if (id === undefined || id === null) {
    if (fallback) return findModel(fallback)!;
    bad('model is required');
  }
  if (typeof id !== 'string' || !MODEL_ID_PATTERN.test(id)) bad(`model must look like <author>/<slug>, got ${JSON.stringify(id)}`);
  const model = findModel(id);
  if (!model || model.kind !== kind) bad(notAModelOfKind(id, kind, model?.kind));
  return model;
}

/** Picks the provider for a model under the caller's routing preferences; undefined when none is allowed. */
export function pickProvider(model: ModelSpec, provider: unknown, qualifies: (slug: string) => boolean = () => true): string | undefined {
  return allowedProviders(model, provider, qualifies)[0];
}

/** The OpenAPI's ProviderPreferences, which takes no other member (`additionalProperties: false`). */
const PROVIDER_KEYS = ['allow_fallbacks', 'data_collection', 'enforce_distillable_text', 'ignore', 'max_price', 'only', 'order', 'preferred_max_latency', 'preferred_min_throughput', 'quantizations', 'require_parameters', 'sort', 'zdr'];

/** A `provider` member the OpenAPI does not name is a 400: a typo (`ordr`) was ignored, and another provider answered. */
export function checkProviderKeys(p: Body): void {
  for (const key in p) if (!PROVIDER_KEYS.includes(key)) bad(`provider.${key} is not a provider preference${didYouMean(key, PROVIDER_KEYS) || ` (known: ${PROVIDER_KEYS.join(', ')})`}`);
}

/** The providers a request names (`provider.only`, `ignore`, `order`, `allow_fallbacks`), its flags checked. */
export function providerNames(provider: unknown): Named {
  if (provider === undefined || provider === null) return { ignore: [], order: [], allowFallbacks: true };
  if (typeof provider !== 'object' || Array.isArray(provider)) bad('provider must be an object');
  const p = provider as Body;
  checkProviderKeys(p);
  for (const flag of ['allow_fallbacks', 'zdr']) {
    if (p[flag] !== undefined && p[flag] !== null && typeof p[flag] !== 'boolean') bad(`provider.${flag} must be a boolean`);
  }
  const list = (field: string, v: unknown): string[] | undefined => {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) bad(`provider.${field} must be an array of provider slugs`);
    return v as string[];
  };
  checkSort(p.sort);
  checkCutoffs(p);
  return { only: list('only', p.only), ignore: list('ignore', p.ignore) ?? [], order: list('order', p.order) ?? [], allowFallbacks: p.allow_fallbacks !== false };
}

/** The OpenAPI's ProviderSort (a name) or ProviderSortConfig (`{by, partition}`); the fake models measure nothing, so any known one keeps their order. */
const SORTS = ['price', 'throughput', 'latency', 'exacto'];
export function checkSort(sort: unknown): void {
  if (sort === undefined || sort === null) return;
  const config = typeof sort === 'object' && !Array.isArray(sort) ? (sort as Body) : undefined;
  const by = config ? config.by : sort;
  if (by !== undefined && by !== null && !SORTS.includes(by as string)) bad(`provider.sort${config ? '.by' : ''} must be one of ${SORTS.join(', ')}, got ${JSON.stringify(by)}`);
  if (config?.partition !== undefined && config.partition !== null && config.partition !== 'model' && config.partition !== 'none') bad('provider.sort.partition must be one of model, none');
}

/** `preferred_max_latency` / `preferred_min_throughput` as the OpenAPI has them: a number (the p50's cut-off), or `{p50, p75, p90, p99}` of numbers. */
const PERCENTILES = ['p50', 'p75', 'p90', 'p99'];
export function checkCutoffs(p: Body): void {
  for (const key of ['preferred_max_latency', 'preferred_min_throughput']) {
    const v = p[key];
    if (v === undefined || v === null || (typeof v === 'number' && Number.isFinite(v))) continue;
    if (typeof v !== 'object' || Array.isArray(v)) bad(`provider.${key} must be a number (the p50's cut-off) or an object of percentiles (${PERCENTILES.join(', ')})`);
    for (const [at, n] of Object.entries(v as Body)) {
      if (!PERCENTILES.includes(at)) bad(`provider.${key}.${at} is not a percentile (${PERCENTILES.join(', ')})`);
      if (n !== null && (typeof n !== 'number' || !Number.isFinite(n))) bad(`provider.${key}.${at} must be a number`);
    }
  }
}

/** `slugs` with those `order` names first, in its order. */
export const inOrder = (slugs: string[], order: string[]) => (order.length ? [...order.filter((s) => slugs.includes(s)), ...slugs.filter((s) => !order.includes(s))] : slugs);

/** A model's providers under the caller's routing preferences, in their order (`provider.order` first): none when none is allowed. */
export function allowedProviders(model: ModelSpec, provider: unknown, qualifies: (slug: string) => boolean = () => true): string[] {
  const { only, ignore, order } = providerNames(provider);
  return inOrder(model.providers.filter((slug) => (!only || only.includes(slug)) && !ignore.includes(slug)).filter(qualifies), order);
}

export function knownProvider(slug: string): boolean {
  return PROVIDERS.includes(slug);
}

const STOP_VARIANTS = ['step_count_is', 'has_tool_call', 'max_tokens_used', 'max_cost', 'finish_reason_is'];

/** stop_server_tools_when (chat and Responses): at least 1 condition, of the known variants. */
export function checkStopConditions(body: Body): void {
  const stops = body.stop_server_tools_when;
  if (stops === undefined || stops === null) return;
  if (!Array.isArray(stops) || stops.length === 0) bad('stop_server_tools_when must be an array of at least 1 condition');
  for (const c of stops) {
    const type = (c as Body | null)?.type;
    if (typeof type !== 'string' || !STOP_VARIANTS.includes(type)) bad(`stop_server_tools_when: unknown condition type ${JSON.stringify(type)}`);
  }
  stops.forEach((c: Body, i) => checkStopCondition(c, i));
}

/** The two stop conditions the spec shows: `step_count_is` with an integer, `max_cost` with a number. */
function checkStopCondition(c: Body, i: number): void {
  const at = `stop_server_tools_when[${i}]`;
  if (c.type === 'step_count_is' && !Number.isInteger(c.step_count)) bad(`${at}: step_count_is needs an integer step_count`);
  if (c.type === 'max_cost' && (typeof c.max_cost_in_dollars !== 'number' || !Number.isFinite(c.max_cost_in_dollars))) {
    bad(`${at}: max_cost needs a number max_cost_in_dollars`);
  }
}

/**
 * The most `models` (fallbacks) a request may list. Neither the spec nor the OpenAPI (`ChatModelNames`)
 * gives a bound; the service answers a longer list with a 400 "'models' array must have 3 items or
 * fewer." (its answer, as clients report it), so the emulator takes the same 3: without a bound, each
 * id was an attempt and a line of `router_metadata`, however many were sent.
 */
export const MAX_FALLBACK_MODELS = 3;

/** `models` (chat and Responses): an array of model ids, at most MAX_FALLBACK_MODELS of them. */
export function checkModelsList(body: Body): void {
  const models = body.models;
  if (models === undefined) return;
  if (!Array.isArray(models) || models.some((m) => typeof m !== 'string')) bad('models must be an array of model identifiers');
  if (models.length > MAX_FALLBACK_MODELS) bad(`'models' array must have ${MAX_FALLBACK_MODELS} items or fewer (it has ${models.length})`);
}

/** The enumerated options chat and Responses share: the deprecated route alias and output modalities. */
export function checkRouteAndModalities(body: Body, modalities: readonly string[]): void {
  optEnum(body, 'route', ['fallback', 'sort', null]);
  const m = body.modalities;
  if (m === undefined || m === null) return;
  if (!Array.isArray(m) || m.some((v) => !modalities.includes(v as string))) bad(`modalities must be an array of ${modalities.join(', ')}`);
}

/** The tier a result reports: the alias "fast" (and chat's "ultrafast", which prefers it) reads back as "priority". */
export function servedTier(asked: unknown): string | null {
  if (asked === undefined || asked === null) return null;
  return asked === 'fast' || asked === 'ultrafast' ? 'priority' : (asked as string);
}
