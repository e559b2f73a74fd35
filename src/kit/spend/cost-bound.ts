/**
 * The upper bound of what one call can cost, from the prices the model list gives (USD per token,
 * per image, per request, as strings). Every estimate here may be high, never low.
 */
import { jsonByteLength } from '../../internal/json-byte-length.js';
import { costText } from '../../internal/round-cost.js';

/** A model's prices, read: USD per prompt token, per completion token, per input image, per request. */
export interface Pricing {
  model: string;
  prompt: number;
  completion: number;
  image: number;
  request: number;
  /** The most completion tokens one answer can hold, when the list says. */
  maxCompletion?: number | undefined;
  /** USD per web search (the web plugin), when the list prices it. */
  webSearch?: number | undefined;
  /** USD per image an answer holds, when the list prices it: no limit bounds how many. */
  imageOutput?: number | undefined;
}

/** What the bound of one call is made of. */
export interface CallSize {
  /** Prompt tokens, at most. */
  promptTokens: number;
  /** Input images, at most. */
  images: number;
  /** Completion tokens, at most; undefined: as many as the model gives. */
  completionTokens?: number | undefined;
  /** Requests the call is sent as (each pays the request price); 1 if absent. */
  requests?: number | undefined;
  /** Web searches the call makes (the web plugin: one a request). */
  searches?: number | undefined;
}

/** The price a batch request is charged, as a fraction of its price alone (docs/conformance.md). */
export const BATCH_PRICE = 0.5;

/** A price string of the model list as a number of USD, or undefined where it is not one. */
function price(value: unknown): number | undefined {
  if (value === undefined || value === null) return 0;
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * The list's price keys that each side of a call may be billed at: a prompt token may be a cache
 * write or audio, a completion token reasoning or audio. The dearest of them bounds the side.
 */
const PRICE_KEYS = {
  prompt: ['prompt', 'input_cache_write', 'input_cache_write_1h', 'audio', 'image_token'],
  completion: ['completion', 'internal_reasoning', 'audio_output', 'image_token'],
  image: ['image'],
  request: ['request'],
  webSearch: ['web_search'],
  imageOutput: ['image_output'],
} as const;

/** A model's pricing as numbers, or a sentence saying why it cannot be read. */
export function readPricing(model: { id: string; pricing?: unknown; top_provider?: unknown; context_length?: unknown }): Pricing | string {
  const p = model.pricing;
  if (!p || typeof p !== 'object') return `the model list gives no pricing for ${model.id}`;
  const raw = p as Record<string, unknown>;
  if (raw.prompt === undefined || raw.completion === undefined) return `the model list gives no prompt or completion price for ${model.id}`;
  // Conditional overrides (long-context or time-based prices) may apply to any call: the dearest counts.
  const tables = [raw, ...(Array.isArray(raw.overrides) ? raw.overrides.filter((o): o is Record<string, unknown> => !!o && typeof o === 'object') : [])];
  const read: Partial<Pricing> = {};
  for (const [side, keys] of Object.entries(PRICE_KEYS) as [keyof typeof PRICE_KEYS, readonly string[]][]) {
    let most = 0;
    for (const table of tables) {
      for (const key of keys) {
        const n = price(table[key]);
        // A negative price (OpenRouter's "-1" for a router whose price depends on the model it picks) cannot bound anything.
        if (n === undefined) return `the ${key} price of ${model.id} is not a price (${JSON.stringify(table[key])})`;
        most = Math.max(most, n);
      }
    }
    read[side] = most;
  }
  const top = (model.top_provider ?? {}) as { max_completion_tokens?: unknown };
  const limit = [top.max_completion_tokens, model.context_length].find((n): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0);
  const { webSearch, imageOutput, ...base } = read as Required<Omit<Pricing, 'model' | 'maxCompletion'>>;
  return { model: model.id, ...base, ...(limit !== undefined ? { maxCompletion: limit } : {}), ...(webSearch ? { webSearch } : {}), ...(imageOutput ? { imageOutput } : {}) };
}

/** The completion tokens a call may produce at most: its own limit, the model's, or unbounded. */
function completionOf(p: Pricing, size: CallSize): number {
  return Math.min(size.completionTokens ?? Infinity, p.maxCompletion ?? Infinity);
}

/** The most one call to this model can cost (Infinity when the completion is unbounded and not free). */
export function callBound(p: Pricing, size: CallSize): number {
  const fixed = fixedCost(p, size);
  const completion = completionOf(p, size);
  if (p.completion === 0) return fixed;
  return fixed + completion * p.completion;
}

/** What a call costs before its first completion token: prompt, images, the request itself. */
function fixedCost(p: Pricing, size: CallSize): number {
  return size.promptTokens * p.prompt + size.images * p.image + (size.requests ?? 1) * p.request + (size.searches ?? 0) * (p.webSearch ?? 0);
}

/** With fallback models, the call can be served by any of them: its bound is the most expensive. */
export function worstBound(prices: Pricing[], size: CallSize): { bound: number; model: string } {
  let worst = { bound: -1, model: '' };
  for (const p of prices) {
    const bound = callBound(p, size);
    if (bound > worst.bound) worst = { bound, model: p.model };
  }
  return worst;
}

/**
 * The most completion tokens that keep the call within `cap` whichever model serves it: 0 when
 * not even one fits (or the prompt alone passes the cap), Infinity when completions are free.
 */
export function completionWithin(prices: Pricing[], size: Omit<CallSize, 'completionTokens'>, cap: number): number {
  let tokens = Infinity;
  for (const p of prices) {
    const left = cap - fixedCost(p, size);
    if (left < 0) return 0;
    if (p.completion > 0) tokens = Math.min(tokens, Math.floor(left / p.completion + 1e-9));
  }
  return tokens;
}

/**
 * Prompt tokens, at most, of a request body: its UTF-8 bytes as JSON. No tokenizer makes more
 * tokens than a text has bytes, and the JSON's keys and quotes stand for the per-message overhead.
 */
export function promptTokenBound(body: unknown): number {
  return jsonByteLength(body);
}

/** Input images in a request (chat `image_url` parts, Responses `input_image` parts), at any depth. */
export function countImages(body: unknown): number {
  if (Array.isArray(body)) return body.reduce<number>((n, v) => n + countImages(v), 0);
  if (!body || typeof body !== 'object') return 0;
  const o = body as Record<string, unknown>;
  const own = o.type === 'image_url' || o.type === 'input_image' ? 1 : 0;
  return own + Object.values(o).reduce<number>((n, v) => n + countImages(v), 0);
}

/** Web searches a request body asks for: one with the web plugin (or a model's `:online` form, or `web_search_options`). */
export function searchesOf(body: Record<string, unknown>): number {
  const plugins = Array.isArray(body.plugins) ? body.plugins : [];
  const web = plugins.some((p) => !!p && typeof p === 'object' && (p as { id?: unknown }).id === 'web');
  const online = [body.model, ...(Array.isArray(body.models) ? body.models : [])].some((m) => typeof m === 'string' && m.endsWith(':online'));
  return web || online || body.web_search_options !== undefined ? 1 : 0;
}

/** Whether a request body asks for images in the answer (`modalities` with "image"). */
export function asksForImages(body: Record<string, unknown>): boolean {
  return Array.isArray(body.modalities) && body.modalities.includes('image');
}

/** Why a call asking for images cannot be bounded, when a model that may serve it prices each image of its answer. */
export function imagesUnbounded(body: Record<string, unknown>, prices: Pricing[]): string | undefined {
  const priced = asksForImages(body) ? prices.find((p) => p.imageOutput) : undefined;
  return priced && `${priced.model} charges ${usd(priced.imageOutput!)} per image of its answer, and nothing limits how many an answer holds`;
}

/**
 * USD as a person reads it, by the rule of costs: to its last digit, six decimals at least and ten at
 * most ($0.0000049, not $0.000005), so that a spend and a budget shown alike are alike.
 */
export function usd(n: number): string {
  if (!Number.isFinite(n)) return 'unbounded';
  return `$${costText(n)}`;
}

/**
 * An amount set or kept in dollars (a --max-cost, a budget, a key's limit and usage) as a person
 * writes it: to the cent, or below a cent to its last digit: $0.01, $2.00, $74.50, $0.000245.
 */
export function usdWritten(n: number): string {
  if (!Number.isFinite(n)) return 'unbounded';
  const [whole, cents = ''] = costText(n).replace(/0+$/, '').split('.');
  return `$${whole}.${cents.padEnd(2, '0')}`;
}

/** A bound as a person reads it: rounded up, so that the amount shown is never below it. */
export function usdBound(n: number): string {
  return usd(n >= 1e-6 ? Math.ceil(n * 1e6 - 1e-9) / 1e6 : n);
}
