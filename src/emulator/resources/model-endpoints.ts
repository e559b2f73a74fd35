import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { MODELS, type ModelSpec } from '../models/models.js';
import type { ChatGateway } from '../providers/types.js';
import type { ProviderConfig } from '../providers/config.js';
import { decimal } from '../../internal/decimal.js';
import { listedModel } from './model-list.js';
import { UPSTREAM_CHAT_PARAMETERS } from '../models/parameters.js';
import type { Measured, Percentiles } from '../routing/measures.js';

/** Tool choices an endpoint takes: all of them when it lists `tool_choice` among its parameters (`local/tools`, a gateway's upstream model), else none. */
const toolChoice = (parameters: string[]) => {
  const takes = parameters.includes('tool_choice');
  return { auto: takes, function: takes, none: takes, required: takes };
};

/** What one provider's endpoint of a model says of it beyond the model's list entry. */
interface Served {
  provider: string;
  pricing: Record<string, unknown>;
  maxCompletionTokens: number | null;
  unavailable?: boolean;
  /** Its own `supported_parameters` (a gateway's upstream endpoint), else the model's. */
  parameters?: string[];
  /** What the gateway measured of its answers (an upstream endpoint); none for a fake model's. */
  measured?: Measured;
}

/**
 * One provider's endpoint of a model, in the OpenAPI's `PublicEndpoint` shape. Latency and throughput are
 * what a gateway measured of an upstream's answers (PercentileStats: latency in milliseconds, tokens a
 * second); null for a fake model's and an unmeasured upstream's. No uptime: the measures keep the last 100
 * attempts of 5 minutes, not every one of 5 or 30 minutes or a day, nor tell a rate limit from an error.
 */
function endpoint(listed: Record<string, unknown>, s: Served): Record<string, unknown> {
  const top = listed.top_provider as { context_length: number };
  const parameters = s.parameters ?? (listed.supported_parameters as string[]);
  return {
    name: `${s.provider}: ${String(listed.id)}`,
    model_id: listed.id,
    model_name: listed.name,
    context_length: top.context_length,
    pricing: s.pricing,
    provider_name: s.provider,
    tag: s.provider,
    quantization: null,
    max_completion_tokens: s.maxCompletionTokens,
    max_prompt_tokens: null,
    supported_parameters: parameters,
    status: s.unavailable ? -1 : 0,
    uptime_last_30m: null,
    uptime_last_5m: null,
    uptime_last_1d: null,
    supports_implicit_caching: false,
    supports_tool_choice: toolChoice(parameters),
    latency_last_30m: s.measured ? milliseconds(s.measured.latency) : null,
    throughput_last_30m: s.measured?.throughput ?? null,
  };
}

const milliseconds = (p: Percentiles): Percentiles => ({ p50: p.p50 * 1000, p75: p.p75 * 1000, p90: p.p90 * 1000, p99: p.p99 * 1000 });

/** A local model's endpoints: one per provider of the catalog, each at the model's list prices. */
function localEndpoints(m: ModelSpec): Served[] {
  const listed = listedModel(m);
  const top = listed.top_provider as { max_completion_tokens: number | null };
  return m.providers.map((provider) => ({ provider, pricing: listed.pricing as Record<string, unknown>, maxCompletionTokens: top.max_completion_tokens, unavailable: m.unavailable }));
}

/** The providers that serve a listed model: its upstreams' (a gateway's providers file), else the fake model's own. */
export function providersOf(providers: ProviderConfig[], id: string): string[] {
  const upstream = upstreamEndpoints(providers, id);
  return upstream.length ? upstream.map((s) => s.provider) : (MODELS.find((m) => m.id === id)?.providers ?? []);
}

export const servedUpstream = (providers: ProviderConfig[], id: string) => upstreamEndpoints(providers, id).length > 0;

/** A gateway's upstream model's endpoints: one per provider of the providers file that serves it, at that provider's configured prices ('0' where it has none: the upstream's own cost is charged). */
function upstreamEndpoints(providers: ProviderConfig[], id: string): Served[] {
  return providers.flatMap((p) => p.models.filter((m) => m.id === id).map((m) => ({
    provider: p.name,
    pricing: { prompt: decimal(m.prices?.prompt ?? 0), completion: decimal(m.prices?.completion ?? 0) },
    maxCompletionTokens: m.maxCompletionTokens ?? null,
    parameters: (m.kind ?? 'chat') === 'chat' ? (m.parameters ?? UPSTREAM_CHAT_PARAMETERS) : [],
  })));
}

/** The model a route's path names (`:author/:slug`, or `:id` with its slash encoded), as the model list has it: the gateway's, else the fake models'. */
function listedOf(ctx: Ctx, gateway: ChatGateway | undefined) {
  const id = ctx.params.id ?? `${ctx.params.author}/${ctx.params.slug}`;
  return { id, listed: (gateway?.listing() ?? MODELS.map(listedModel)).find((m) => m.id === id) };
}

/**
 * One model's routes: `GET /v1/model/{author}/{slug}`, its entry of the model list (any listed model);
 * `GET /v1/models/{author}/{slug}/endpoints`, where each entry's `links.details` points: the model
 * and one endpoint per provider that serves it, for any listed model: a local one (a gateway with
 * `local_models: false` lists none) or a gateway's upstream one (`router serve --providers`).
 */
export const modelEndpointRoutes = defineRoutes((parts: { gateway?: ChatGateway; providers?: ProviderConfig[] }) => [
  {
    method: 'GET',
    path: '/v1/model/:author/:slug',
    access: 'any',
    handler: async (ctx: Ctx) => {
      const { id, listed } = listedOf(ctx, parts.gateway);
      if (!listed) throw new HttpError(404, `No model ${id} in the model list`);
      ctx.send(200, { data: listed });
    },
  },
  // Not in the OpenAPI, but the openai SDK's `models.retrieve(id)` asks it (`/models/local%2Fecho`): the
  // model list's entry, with OpenAI's `object` and `owned_by` so both readers find theirs. After
  // `/v1/models/user` and `/count` (account.ts), which the one-part path would otherwise take.
  ...['/v1/models/:id', '/v1/models/:author/:slug'].map((path) => ({
    method: 'GET' as const,
    path,
    access: 'any' as const,
    handler: async (ctx: Ctx) => {
      const { id, listed } = listedOf(ctx, parts.gateway);
      if (!listed) throw new HttpError(404, `No model ${id} in the model list`, 'not_found');
      ctx.send(200, { ...listed, object: 'model', owned_by: id.split('/')[0] });
    },
  })),
  {
    method: 'GET',
    path: '/v1/models/:author/:slug/endpoints',
    access: 'any',
    handler: async (ctx: Ctx) => {
      const { id, listed } = listedOf(ctx, parts.gateway);
      const upstream = upstreamEndpoints(parts.providers ?? [], id).map((s) => ({ ...s, measured: parts.gateway?.shown(s.provider, id) }));
      const local = MODELS.find((spec) => spec.id === id);
      const served = upstream.length ? upstream : local ? localEndpoints(local) : [];
      if (!listed || !served.length) throw new HttpError(404, `No endpoints listed for ${id}: no model of the list has that id`);
      const { name, created, description, architecture } = listed;
      ctx.send(200, { data: { id, name, created, description, architecture, endpoints: served.map((s) => endpoint(listed, s)) } });
    },
  },
  {
    // Every fake endpoint keeps no prompt past its answer (`provider.zdr: true` routes to any); a gateway's upstream's are not listed:
    // the gateway cannot vouch for what an upstream keeps (its routing passes them over under `provider.zdr: true`).
    method: 'GET',
    path: '/v1/endpoints/zdr',
    access: 'any',
    handler: async (ctx: Ctx) => {
      const listing = parts.gateway?.listing() ?? MODELS.map(listedModel);
      const data = listing.flatMap((listed) => {
        const local = MODELS.find((spec) => spec.id === listed.id);
        return servedUpstream(parts.providers ?? [], listed.id as string) || !local ? [] : localEndpoints(local).map((s) => endpoint(listed, s));
      });
      ctx.send(200, { data });
    },
  },
]);
