import type { Ctx } from '../http/http.js';
import { bad } from '../http/validate.js';
import { round } from '../models/models.js';
import type { KeptGeneration } from '../state/store-api.js';
import { workspaceUuid } from '../state/workspace-id.js';
import { chargedGenerations } from '../batches/batch-rules.js';
import { cutText } from '../../internal/first-words.js';

type Body = Record<string, unknown>;
type Value = string | number;
type Row = Record<string, Value>;

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The metrics a query may ask (META lists them): each a sum over a row's generations, or (a rate) their mean. */
export const METRICS: Record<string, { of: (d: Body) => number; rate?: boolean; cost?: boolean }> = {
  request_count: { of: () => 1 },
  usage: { of: (d) => num(d.total_cost), cost: true },
  prompt_tokens: { of: (d) => num(d.tokens_prompt) },
  completion_tokens: { of: (d) => num(d.tokens_completion) },
  reasoning_tokens: { of: (d) => num(d.native_tokens_reasoning) },
  latency: { of: (d) => num(d.latency), rate: true },
};

/** The dimensions a query may group and filter by (META lists them): a generation's value of each. */
export const DIMENSIONS: Record<string, (g: KeptGeneration) => string> = {
  model: (g) => String(g.data.model),
  provider_name: (g) => String(g.data.provider_name ?? 'unknown'),
  api_key: (g) => g.key ?? '',
  workspace: (g) => workspaceUuid(g.workspace),
};

export const GRANULARITIES = ['minute', 'hour', 'day', 'week', 'month'] as const;
export const SCALAR_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'];
export const ARRAY_OPERATORS = ['in', 'not_in'];

const DAY_MS = 86_400_000;
/** Rows a query returns when it names no `limit`, as the service's. */
const DEFAULT_LIMIT = 1000;
/** The range a query without `time_range` covers: the 30 days up to now. */
const DEFAULT_RANGE_MS = 30 * DAY_MS;

/** The start of the bucket of `granularity` that `ms` falls in, as ISO (weeks from Monday, UTC). */
function bucket(ms: number, granularity: string): string {
  const d = new Date(ms);
  if (granularity === 'month') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
  if (granularity === 'week') {
    const day = Math.floor(ms / DAY_MS) * DAY_MS;
    return new Date(day - ((d.getUTCDay() + 6) % 7) * DAY_MS).toISOString();
  }
  const size = granularity === 'minute' ? 60_000 : granularity === 'hour' ? 3_600_000 : DAY_MS;
  return new Date(Math.floor(ms / size) * size).toISOString();
}

const list = (body: Body, field: string, most: number, known: Record<string, unknown>, least = 0): string[] => {
  const v = body[field] ?? [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) bad(`${field} must be a list of names`);
  if (v.length < least || v.length > most) bad(`${field} must have ${least ? `${least} to ` : 'at most '}${most} entries`);
  for (const name of v as string[]) if (!Object.hasOwn(known, name)) bad(`${field}: ${JSON.stringify(cutText(name, 78))} is not one of ${Object.keys(known).join(', ')} (GET /api/v1/analytics/meta)`);
  return v as string[];
};

const time = (range: Body, end: 'start' | 'end'): number => {
  const v = range[end];
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) bad(`time_range.${end} must be a date-time (2025-01-01T00:00:00Z)`);
  return ms;
};

const count = (body: Body, field: string): number | undefined => {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) bad(`${field} must be a whole number of at least 1`);
  return v;
};

type Filter = { field: string; keep: (value: string) => boolean };

/** A filter of the request as a test of a generation's value of its dimension. */
function filterOf(f: unknown, i: number): Filter {
  if (!f || typeof f !== 'object' || Array.isArray(f)) bad(`filters[${i}] must be an object with field, operator and value`);
  const { field, operator, value } = f as Body;
  if (typeof field !== 'string' || !Object.hasOwn(DIMENSIONS, field)) bad(`filters[${i}].field must be one of ${Object.keys(DIMENSIONS).join(', ')}`);
  const scalar = (v: unknown): v is Value => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
  if (ARRAY_OPERATORS.includes(operator as string)) {
    if (!Array.isArray(value) || !value.every(scalar)) bad(`filters[${i}].value must be a list for ${String(operator)}`);
    const set = new Set((value as Value[]).map(String));
    return { field, keep: operator === 'in' ? (x) => set.has(x) : (x) => !set.has(x) };
  }
  if (!SCALAR_OPERATORS.includes(operator as string)) bad(`filters[${i}].operator must be one of ${[...SCALAR_OPERATORS, ...ARRAY_OPERATORS].join(', ')}`);
  if (!scalar(value)) bad(`filters[${i}].value must be a string or a number for ${String(operator)}`);
  const want = String(value);
  const compare = (x: string) => (typeof value === 'number' && Number.isFinite(Number(x)) ? Number(x) - value : x < want ? -1 : x > want ? 1 : 0);
  const test = { eq: (c: number) => c === 0, neq: (c: number) => c !== 0, gt: (c: number) => c > 0, gte: (c: number) => c >= 0, lt: (c: number) => c < 0, lte: (c: number) => c <= 0 }[operator as 'eq'];
  return { field, keep: (x) => test(compare(x)) };
}

/**
 * `POST /v1/analytics/query` (OpenAPI `queryAnalytics`) over the generations the emulator keeps of
 * the caller's workspace: `metrics` (at least one) summed (a rate, averaged) per row; rows grouped by
 * up to two `dimensions` and, with `granularity`, by time bucket (`date__<granularity>`, its start);
 * `filters` on dimensions; `time_range` (default: the last 30 days); `order_by`; `limit` and
 * `group_limit`. Classifiers: the emulator has none, so asking for one is a 400.
 */
export function analyticsQuery(ctx: Ctx, body: Body): { data: Row[]; metadata: { query_time_ms: number; row_count: number; truncated: boolean } } {
  const began = performance.now();
  if (body.classifier_dimensions !== undefined || body.classifier_filters !== undefined) bad('this workspace has no active classifier: classifier_dimensions and classifier_filters need one');
  const metrics = list(body, 'metrics', Object.keys(METRICS).length, METRICS, 1);
  const dimensions = list(body, 'dimensions', 2, DIMENSIONS);
  const granularity = body.granularity;
  if (granularity !== undefined && !GRANULARITIES.includes(granularity as (typeof GRANULARITIES)[number])) bad(`granularity must be one of ${GRANULARITIES.join(', ')}`);
  const filtersGiven = body.filters ?? [];
  if (!Array.isArray(filtersGiven) || filtersGiven.length > 20) bad('filters must be a list of at most 20 filters');
  const filters = filtersGiven.map(filterOf);
  const now = ctx.store.now();
  let start = now - DEFAULT_RANGE_MS;
  // Up to now, inclusive: a call answered this very millisecond counts.
  let end = now + 1;
  if (body.time_range !== undefined) {
    if (!body.time_range || typeof body.time_range !== 'object' || Array.isArray(body.time_range)) bad('time_range must be an object with start and end');
    start = time(body.time_range as Body, 'start');
    end = time(body.time_range as Body, 'end');
    if (start > end) bad('time_range.start must not be after time_range.end');
  }
  const limit = count(body, 'limit') ?? DEFAULT_LIMIT;
  // Checked even when no dimension makes groups for it to cut.
  const groupLimit = count(body, 'group_limit') !== undefined && dimensions.length ? (body.group_limit as number) : undefined;
  const dateColumn = granularity === undefined ? undefined : `date__${String(granularity)}`;
  const order = orderOf(body.order_by, metrics, dimensions, dateColumn);

  const rows = new Map<string, { row: Row; sums: number[]; n: number }>();
  // As /v1/activity: a fake models' batch counts once it is paid.
  const charged = chargedGenerations(ctx.store.batches);
  for (const g of ctx.store.allGenerations()) {
    if (g.workspace !== ctx.workspace || !charged(g)) continue;
    const at = Date.parse(String(g.data.created_at ?? ''));
    if (!(at >= start && at < end)) continue;
    if (!filters.every((f) => f.keep(DIMENSIONS[f.field]!(g)))) continue;
    const row: Row = {};
    if (dateColumn) row[dateColumn] = bucket(at, granularity as string);
    for (const d of dimensions) row[d] = DIMENSIONS[d]!(g);
    const id = JSON.stringify(row);
    let got = rows.get(id);
    if (!got) rows.set(id, (got = { row, sums: metrics.map(() => 0), n: 0 }));
    got.n++;
    metrics.forEach((m, i) => (got!.sums[i]! += METRICS[m]!.of(g.data)));
    if (!metrics.includes('request_count')) got.row.request_count = got.n;
  }
  const all = [...rows.values()].map(({ row, sums, n }) => {
    metrics.forEach((m, i) => (row[m] = METRICS[m]!.rate ? round(sums[i]! / n) : METRICS[m]!.cost ? round(sums[i]!) : sums[i]!));
    return row;
  });
  all.sort(order);
  const perGroup = new Map<string, number>();
  const kept = groupLimit === undefined ? all : all.filter((row) => {
    const group = JSON.stringify(dimensions.map((d) => row[d]));
    const n = (perGroup.get(group) ?? 0) + 1;
    perGroup.set(group, n);
    return n <= groupLimit;
  });
  const data = kept.slice(0, limit);
  // request_count was counted to order by without being asked: not returned.
  if (!metrics.includes('request_count')) for (const row of data) delete row.request_count;
  return { data, metadata: { query_time_ms: round(performance.now() - began), row_count: data.length, truncated: kept.length > limit } };
}

/** How rows are ordered: `order_by` (a metric asked, request_count, a dimension asked, or "date"), else by date, then by request count, most first. */
function orderOf(orderBy: unknown, metrics: string[], dimensions: string[], dateColumn: string | undefined): (a: Row, b: Row) => number {
  const by = (field: string, sign: number) => (a: Row, b: Row) => {
    const x = a[field] ?? 0;
    const y = b[field] ?? 0;
    return sign * (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y)));
  };
  const fallback = (a: Row, b: Row) => (dateColumn ? by(dateColumn, 1)(a, b) : 0) || by('request_count', -1)(a, b) || JSON.stringify(a).localeCompare(JSON.stringify(b));
  if (orderBy === undefined) return fallback;
  const o = orderBy as Body | null;
  if (!o || typeof o !== 'object' || Array.isArray(o) || typeof o.field !== 'string' || (o.direction !== 'asc' && o.direction !== 'desc')) bad('order_by must be an object with field and direction (asc or desc)');
  const field = o.field === 'date' ? dateColumn : o.field;
  if (field === undefined || !(metrics.includes(field) || field === 'request_count' || dimensions.includes(field) || field === dateColumn)) {
    bad('order_by.field must be a metric asked, request_count, a dimension asked, or date (with a granularity)');
  }
  const first = by(field, o.direction === 'asc' ? 1 : -1);
  return (a, b) => first(a, b) || fallback(a, b);
}
