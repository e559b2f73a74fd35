import type { ModelSpec } from '../models/models.js';

/** Where a request was routed: the model and provider chosen, after how many attempts. */
export interface Routed {
  model: ModelSpec;
  provider: string;
  attempt: number;
  requested: string;
  /** The chain up to the model chosen, in its order: each model, or an id that names no model here and why (passed over). */
  tried: (ModelSpec | Skipped)[];
}

/** An id of the models list that names no model here, and the 400's words why. */
export interface Skipped {
  model: string;
  error: string;
}

const isSkipped = (m: ModelSpec | Skipped): m is Skipped => 'error' in m;

/**
 * The fields a caller opted in to: `router_metadata` (api.md's legacy header, `X-Router-Metadata`)
 * and `openrouter_metadata` (`X-OpenRouter-Metadata`, the deployed service's name and shape).
 */
export interface MetadataAsk {
  router: boolean;
  openrouter: boolean;
}

export const NO_METADATA: MetadataAsk = { router: false, openrouter: false };

export const asksMetadata = (ask: MetadataAsk | undefined) => !!ask && (ask.router || ask.openrouter);

/** The metadata fields an answer carries, as asked. */
export function metadataFields(routed: Routed, api: string, ask: MetadataAsk | undefined, body?: { plugins?: unknown }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (ask?.router) out.router_metadata = routerMetadata(routed, api);
  if (ask?.openrouter) out.openrouter_metadata = openrouterMetadata(routed, api, body);
  return out;
}

/** The metadata fields as response headers (speech's: audio has no body to carry them), `x-router-metadata` and so on: each field's JSON in ASCII. */
export function metadataHeaders(fields: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields ?? {})) out[`x-${name.replace('_', '-')}`] = JSON.stringify(value).replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return out;
}

/** The `router_metadata` object surfaced when the caller opts in with api.md's header. */
export function routerMetadata(routed: Routed, api: string) {
  return {
    attempt: routed.attempt,
    endpoints: {
      available: routed.model.providers.map((p) => ({ model: routed.model.id, provider: p, selected: p === routed.provider })),
      total: routed.model.providers.length,
    },
    generation_time: 1,
    is_byok: false,
    region: 'local',
    requested: routed.requested,
    strategy: routed.attempt > 1 ? 'fallback' : 'direct',
    summary: `${api}: ${routed.requested} -> ${routed.model.id} via ${routed.provider} (attempt ${routed.attempt})${passedOver(routed)}`,
  };
}

/**
 * The OpenAPI's OpenRouterMetadata: the fields above less `generation_time`, with `attempts` (each
 * model tried, 503 for one that was down) and `pipeline` (a stage per plugin the request named).
 */
export function openrouterMetadata(routed: Routed, api: string, body?: { plugins?: unknown }) {
  const { generation_time: _time, ...common } = routerMetadata(routed, api);
  // In the chain's order: an id passed over where the list names it, not before the models tried.
  const attempts = routed.tried.map((m) => (isSkipped(m) ? { provider: 'none', model: m.model, status: 400 } : { provider: m === routed.model ? routed.provider : (m.providers[0] ?? 'none'), model: m.id, status: m === routed.model ? 200 : 503 }));
  const plugins = Array.isArray(body?.plugins) ? (body.plugins as { id?: unknown }[]).filter((p) => typeof p?.id === 'string') : [];
  const pipeline = plugins.map((p) => ({ type: 'plugin', name: p.id as string, summary: `${p.id as string} plugin ran` }));
  return { ...common, attempts, ...(pipeline.length ? { pipeline } : {}) };
}

/**
 * The summary's words for the ids passed over, in the chain's order, as the gateway's chat says them: an id
 * that names no model of this kind (`none (…)`), a model that is down (`its provider (id: unavailable)`).
 */
function passedOver(routed: Routed): string {
  const words = routed.tried.flatMap((m) => (isSkipped(m) ? [`none (${m.error})`] : m !== routed.model && m.unavailable ? [`${m.providers[0] ?? 'none'} (${m.id}: unavailable)`] : []));
  return words.length ? `; passed over: ${words.join(', ')}` : '';
}
