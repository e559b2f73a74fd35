import type { Ctx } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';
import { analyticsQuery, ARRAY_OPERATORS, DIMENSIONS, GRANULARITIES, METRICS, SCALAR_OPERATORS } from './analytics-query.js';

const LABELS: Record<string, string> = {
  request_count: 'Request Count',
  usage: 'Spend',
  prompt_tokens: 'Prompt Tokens',
  completion_tokens: 'Completion Tokens',
  reasoning_tokens: 'Reasoning Tokens',
  latency: 'Latency',
  model: 'Model',
  provider_name: 'Provider',
  api_key: 'API Key',
  workspace: 'Workspace',
};
const label = (name: string) => LABELS[name] ?? name[0]!.toUpperCase() + name.slice(1);

/**
 * What an analytics query may ask, in the OpenAPI's `getAnalyticsMeta` shape: the metrics and
 * dimensions of what the emulator records of a generation (its activity's), every operator and
 * granularity the OpenAPI names.
 */
const META = {
  metrics: Object.entries(METRICS).map(([name, m]) => ({ name, display_label: label(name), is_rate: !!m.rate, display_format: m.cost ? 'currency' : m.rate ? 'latency' : 'number' })),
  dimensions: Object.keys(DIMENSIONS).map((name) => ({ name, display_label: label(name) })),
  operators: [...SCALAR_OPERATORS.map((name) => ({ name, value_type: 'scalar' })), ...ARRAY_OPERATORS.map((name) => ({ name, value_type: 'array' }))],
  granularities: GRANULARITIES.map((name) => ({ name, display_label: label(name) })),
};

/** `GET /v1/analytics/meta` and `POST /v1/analytics/query` (analytics-query.ts), management key. */
export const analyticsRoutes = defineRoutes(() => [
  { method: 'GET', path: '/v1/analytics/meta', access: 'management', handler: async (ctx: Ctx) => ctx.send(200, { data: META }) },
  { method: 'POST', path: '/v1/analytics/query', access: 'management', handler: async (ctx: Ctx) => ctx.send(200, { data: analyticsQuery(ctx, await ctx.json()) }) },
]);
