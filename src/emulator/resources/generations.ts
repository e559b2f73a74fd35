import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { keyHash } from '../state/key-usage.js';
import { workspaceUuid } from '../state/workspace-id.js';
import type { KeyRecord } from '../state/store-api.js';
import { activity } from './activity.js';

/** What the emulator keeps of a generation it served, for `GET /v1/generation?id=`. */
export interface Served {
  id: string;
  model: string;
  provider: string;
  apiType: 'completions' | 'embeddings' | 'tts';
  promptTokens: number;
  completionTokens: number;
  reasoningTokens?: number;
  cost: number;
  streamed: boolean;
  finishReason: string | null;
  /** When the request came in (Unix ms, the store's clock): latency runs from it. */
  startedAt: number;
  user?: unknown;
  sessionId?: string;
  /** The id the upstream provider gave its answer (a gateway's answer). */
  upstreamId?: string;
  /** The caller hung up mid-stream, after part of the answer (charged that part). */
  cancelled?: boolean;
  /** The tier the request ran on, as the provider reported it (a batch's: `batch`); null when unknown. */
  serviceTier?: string | null;
}

/** Each key's hash, made once per key record (not per request: the gateway's hot path records every answer). */
const hashes = new WeakMap<KeyRecord, string>();
function hashOf(record: KeyRecord): string {
  let hash = hashes.get(record);
  if (hash === undefined) hashes.set(record, (hash = keyHash(record.key)));
  return hash;
}

/** The request a generation answered, as its record names it: where it came from, and its id. */
export interface AskedBy {
  origin: string;
  userAgent: string | null;
  referer: string | null;
  requestId: string;
}

/** Keeps a generation that was delivered, in the OpenAPI's GenerationResponse `data` shape. */
export function recordGeneration(ctx: Ctx, g: Served): void {
  const by = { origin: ctx.header('origin') ?? '', userAgent: ctx.header('user-agent') ?? null, referer: ctx.header('http-referer') ?? null, requestId: ctx.requestId };
  ctx.store.keepGeneration(g.id, { workspace: ctx.workspace, key: ctx.key ? hashOf(ctx.key) : undefined, data: generationData(g, ctx.store.now(), by) });
}

/** A generation's record as `GET /v1/generation` answers it (`workspace_id` filled in as it is read), at `now` (the store's clock). */
export function generationData(g: Served, now: number, by: AskedBy): Record<string, unknown> {
  const latency = Math.max(0, now - g.startedAt);
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    id: g.id,
    upstream_id: g.upstreamId ?? null,
    total_cost: g.cost,
    cache_discount: null,
    upstream_inference_cost: null,
    created_at: new Date(g.startedAt).toISOString(),
    model: g.model,
    app_id: null,
    streamed: g.streamed,
    cancelled: g.cancelled === true,
    provider_name: g.provider,
    latency,
    moderation_latency: null,
    generation_time: latency,
    finish_reason: g.finishReason,
    service_tier: g.serviceTier ?? null,
    tokens_prompt: g.promptTokens,
    tokens_completion: g.completionTokens,
    native_tokens_prompt: g.promptTokens,
    native_tokens_completion: g.completionTokens,
    native_tokens_completion_images: 0,
    native_tokens_reasoning: g.reasoningTokens ?? 0,
    native_tokens_cached: 0,
    num_media_prompt: 0,
    num_input_audio_prompt: 0,
    num_media_completion: 0,
    num_search_results: 0,
    num_fetches: 0,
    web_search_engine: null,
    origin: by.origin,
    usage: g.cost,
    is_byok: false,
    native_finish_reason: g.finishReason,
    external_user: str(g.user),
    api_type: g.apiType,
    preset_id: null,
    router: null,
    provider_responses: null,
    user_agent: by.userAgent,
    http_referer: by.referer,
    data_region: 'global',
    // Its workspace's UUID, given as it is read (one kept by an older version has null here).
    workspace_id: null,
    request_id: by.requestId,
    session_id: g.sessionId ?? null,
  };
}

/** `GET /v1/generation?id=`: a generation this workspace was served, under the workspace's UUID (as /v1/key names it); 404 for any other. */
export const generationRoutes = defineRoutes(() => [
  {
    method: 'GET',
    path: '/v1/generation',
    access: 'any',
    handler: async (ctx: Ctx) => {
      const id = ctx.url.searchParams.get('id');
      if (!id) throw new HttpError(400, 'the id query parameter is required', 'invalid_request');
      const kept = ctx.store.generation(id);
      if (!kept || kept.workspace !== ctx.workspace) throw new HttpError(404, `Generation ${id} not found`, 'not_found');
      ctx.send(200, { data: { ...kept.data, workspace_id: workspaceUuid(kept.workspace) } });
    },
  },
  { method: 'GET', path: '/v1/activity', access: 'management', handler: async (ctx: Ctx) => ctx.send(200, { data: activity(ctx) }) },
]);
