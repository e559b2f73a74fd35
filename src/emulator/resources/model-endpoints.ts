import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { MODELS, type ModelSpec } from '../models/models.js';
import type { ChatGateway } from '../providers/types.js';
import { listedModel } from './model-list.js';

/** Tool choices a model takes: `local/tools` all of them, the others none (they call no tools). */
const toolChoice = (m: ModelSpec) => {
  const takes = m.id === 'local/tools';
  return { auto: takes, function: takes, none: takes, required: takes };
};

/** One provider's endpoint of a local model, in the OpenAPI's `PublicEndpoint` shape; the emulator measures no latency, throughput or uptime. */
function endpoint(m: ModelSpec, listed: Record<string, unknown>, provider: string): Record<string, unknown> {
  const top = listed.top_provider as { context_length: number; max_completion_tokens: number | null };
  return {
    name: `${provider}: ${m.id}`,
    model_id: m.id,
    model_name: listed.name,
    context_length: top.context_length,
    pricing: listed.pricing,
    provider_name: provider,
    tag: provider,
    quantization: null,
    max_completion_tokens: top.max_completion_tokens,
    max_prompt_tokens: null,
    supported_parameters: listed.supported_parameters,
    status: m.unavailable ? -1 : 0,
    uptime_last_30m: null,
    uptime_last_5m: null,
    uptime_last_1d: null,
    supports_implicit_caching: false,
    supports_tool_choice: toolChoice(m),
    latency_last_30m: null,
    throughput_last_30m: null,
  };
}

/**
 * One model's routes: `GET /v1/model/{author}/{slug}`, its entry of the model list (any listed model);
 * `GET /v1/models/{author}/{slug}/endpoints`, where each entry's `links.details` points: the model
 * and one endpoint per provider that serves it. Local models only, and only when listed (a gateway
 * with `local_models: false` serves none); a gateway's upstream models are described by their list entry alone.
 */
export const modelEndpointRoutes = defineRoutes((parts: { gateway?: ChatGateway }) => [
  {
    method: 'GET',
    path: '/v1/model/:author/:slug',
    access: 'any',
    handler: async (ctx: Ctx) => {
      const id = `${ctx.params.author}/${ctx.params.slug}`;
      const listed = (parts.gateway?.listing() ?? MODELS.map(listedModel)).find((m) => m.id === id);
      if (!listed) throw new HttpError(404, `No model ${id} in the model list`);
      ctx.send(200, { data: listed });
    },
  },
  {
    method: 'GET',
    path: '/v1/models/:author/:slug/endpoints',
    access: 'any',
    handler: async (ctx: Ctx) => {
      const id = `${ctx.params.author}/${ctx.params.slug}`;
      // A fake model a gateway does not serve (local_models: false) has no endpoints either.
      const m = parts.gateway && !parts.gateway.listing().some((l) => l.id === id) ? undefined : MODELS.find((spec) => spec.id === id);
      if (!m) throw new HttpError(404, `No endpoints listed for ${id}: the emulator lists those of its local/… models`);
      const listed = listedModel(m);
      const { id: _id, name, created, description, architecture } = listed;
      ctx.send(200, { data: { id, name, created, description, architecture, endpoints: m.providers.map((p) => endpoint(m, listed, p)) } });
    },
  },
]);
