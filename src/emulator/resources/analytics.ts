import type { Ctx } from '../http/http.js';
import { defineRoutes } from '../http/routes.js';

const labelled = (names: [string, string][]) => names.map(([name, display_label]) => ({ name, display_label }));

/**
 * What an analytics query may ask, in the OpenAPI's `getAnalyticsMeta` shape: the metrics and
 * dimensions of what the emulator records of a generation (its activity's), every operator and
 * granularity the OpenAPI names.
 */
const META = {
  metrics: [
    { name: 'request_count', display_label: 'Request Count', is_rate: false, display_format: 'number' },
    { name: 'usage', display_label: 'Spend', is_rate: false, display_format: 'currency' },
    { name: 'prompt_tokens', display_label: 'Prompt Tokens', is_rate: false, display_format: 'number' },
    { name: 'completion_tokens', display_label: 'Completion Tokens', is_rate: false, display_format: 'number' },
    { name: 'reasoning_tokens', display_label: 'Reasoning Tokens', is_rate: false, display_format: 'number' },
    { name: 'latency', display_label: 'Latency', is_rate: true, display_format: 'latency' },
  ],
  dimensions: labelled([['model', 'Model'], ['provider_name', 'Provider'], ['api_key', 'API Key']]),
  operators: [...['eq', 'neq', 'gt', 'gte', 'lt', 'lte'].map((name) => ({ name, value_type: 'scalar' })), ...['in', 'not_in'].map((name) => ({ name, value_type: 'array' }))],
  granularities: labelled([['minute', 'Minute'], ['hour', 'Hour'], ['day', 'Day'], ['week', 'Week'], ['month', 'Month']]),
};

/** `GET /v1/analytics/meta` (management key). The query itself (`POST /v1/analytics/query`) is not served. */
export const analyticsRoutes = defineRoutes(() => [{ method: 'GET', path: '/v1/analytics/meta', access: 'management', handler: async (ctx: Ctx) => ctx.send(200, { data: META }) }]);
