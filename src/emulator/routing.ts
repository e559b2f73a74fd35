import type { ModelSpec } from './models.js';

/** Where a request was routed: the model and provider chosen, after how many attempts. */
export interface Routed {
  model: ModelSpec;
  provider: string;
  attempt: number;
  requested: string;
  tried: ModelSpec[];
}


/** The `router_metadata` object surfaced when the caller opts in. */
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
    summary: `${api}: ${routed.requested} -> ${routed.model.id} via ${routed.provider} (attempt ${routed.attempt})`,
  };
}
