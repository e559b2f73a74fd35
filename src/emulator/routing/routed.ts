import type { ModelSpec } from '../models/models.js';

/** Where a request was routed: the model and provider chosen, after how many attempts. */
export interface Routed {
  model: ModelSpec;
  provider: string;
  attempt: number;
  requested: string;
  tried: ModelSpec[];
  /** Ids of the chain before the model chosen that name no model here, and why: passed over. */
  skipped?: { model: string; error: string }[];
}

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
    summary: `${api}: ${routed.requested} -> ${routed.model.id} via ${routed.provider} (attempt ${routed.attempt})${routed.skipped?.length ? `; passed over: ${routed.skipped.map((s) => `none (${s.error})`).join(', ')}` : ''}`,
  };
}

/**
 * The OpenAPI's OpenRouterMetadata: the fields above less `generation_time`, with `attempts` (each
 * model tried, 503 for one that was down) and `pipeline` (a stage per plugin the request named).
 */
export function openrouterMetadata(routed: Routed, api: string, body?: { plugins?: unknown }) {
  const { generation_time: _time, ...common } = routerMetadata(routed, api);
  const skipped = (routed.skipped ?? []).map((s) => ({ provider: 'none', model: s.model, status: 400 }));
  const attempts = [...skipped, ...routed.tried.map((m) => ({ provider: m === routed.model ? routed.provider : (m.providers[0] ?? 'none'), model: m.id, status: m === routed.model ? 200 : 503 }))];
  const plugins = Array.isArray(body?.plugins) ? (body.plugins as { id?: unknown }[]).filter((p) => typeof p?.id === 'string') : [];
  const pipeline = plugins.map((p) => ({ type: 'plugin', name: p.id as string, summary: `${p.id as string} plugin ran` }));
  return { ...common, attempts, ...(pipeline.length ? { pipeline } : {}) };
}
