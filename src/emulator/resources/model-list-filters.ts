import { HttpError } from '../http/http.js';

/**
 * The OpenAPI's query filters and sort of `GET /v1/models`, applied to the listed models (they were
 * read and ignored: every query answered the whole list). What the emulator's models have (ids,
 * names, prices, context, parameters, modalities, creation, providers) filters by them; what they do
 * not have (a category, a benchmark index, a tool success rate, a distillation licence, an endpoint
 * in a named region) matches none, as a model without that fact would; sorts by statistics it does
 * not keep leave the list's order (the OpenAPI: "models without a score … are placed last").
 * A value the OpenAPI does not allow is a 400 naming the parameter, as `offset` and `limit` are.
 */

type Listed = Record<string, unknown>;
type Test = (raw: string) => (m: Listed) => boolean;

export interface FilterFacts {
  /** Unix seconds now (the store's clock), for the age filters. */
  now: number;
  /** The providers that serve a model. */
  providersOf: (id: string) => string[];
  /** Whether a gateway's upstream serves a model: one whose retention the gateway cannot vouch for. */
  upstream?: (id: string) => boolean;
}

const CATEGORIES = ['programming', 'roleplay', 'marketing', 'marketing/seo', 'technology', 'science', 'translation', 'legal', 'finance', 'health', 'trivia', 'academia'];
const SORTS = ['most-popular', 'newest', 'top-weekly', 'pricing-low-to-high', 'pricing-high-to-low', 'context-high-to-low', 'throughput-high-to-low', 'latency-low-to-high', 'intelligence-high-to-low', 'coding-high-to-low', 'agentic-high-to-low', 'design-arena-elo-high-to-low'];
/** Benchmark bounds: the emulator's models have no score, so a bound matches none of them. */
const SCORES = ['intelligence_index', 'coding_index', 'agentic_index'];

const list = (raw: string) => raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
const perMillion = (m: Listed, part: 'prompt' | 'completion') => Number((m.pricing as Record<string, string>)[part]) * 1e6;
const words = (m: Listed, field: string) => ((m[field] as string[] | undefined) ?? []).map((s) => s.toLowerCase());
const modalitiesIn = (m: Listed) => ((m.architecture as { input_modalities?: string[] }).input_modalities ?? []).map((s) => s.toLowerCase());

function oneOf(name: string, raw: string, allowed: string[]): string {
  if (!allowed.includes(raw)) throw new HttpError(400, `${name} must be one of ${allowed.join(', ')}`);
  return raw;
}

function number(name: string, raw: string, min: number, max = Infinity, whole = false): number {
  const n = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(n) || n < min || n > max || (whole && !Number.isInteger(n))) throw new HttpError(400, `${name} must be ${whole ? 'a whole number' : 'a number'} from ${min}${max === Infinity ? ' up' : ` to ${max}`}`);
  return n;
}

function filters(facts: FilterFacts): Record<string, Test> {
  const atLeast = (name: string, value: (m: Listed) => number, whole = false): Test => (raw) => {
    const n = number(name, raw, 0, Infinity, whole);
    return (m) => value(m) >= n;
  };
  const atMost = (name: string, value: (m: Listed) => number, whole = false): Test => (raw) => {
    const n = number(name, raw, 0, Infinity, whole);
    return (m) => value(m) <= n;
  };
  const ageDays = (m: Listed) => (facts.now - Number(m.created)) / 86_400;
  const none = (check: (raw: string) => unknown): Test => (raw) => (check(raw), () => false);
  const out: Record<string, Test> = {
    q: (raw) => (m) => [m.id, m.name].some((s) => String(s).toLowerCase().includes(raw.trim().toLowerCase())),
    supported_parameters: (raw) => (m) => list(raw).every((p) => words(m, 'supported_parameters').includes(p)),
    input_modalities: (raw) => (m) => list(raw).every((p) => modalitiesIn(m).includes(p)),
    context: (raw) => {
      const n = number('context', raw, 1, Infinity, true);
      return (m) => Number(m.context_length) >= n;
    },
    min_price: atLeast('min_price', (m) => perMillion(m, 'prompt')),
    max_price: atMost('max_price', (m) => perMillion(m, 'prompt')),
    min_output_price: atLeast('min_output_price', (m) => perMillion(m, 'completion')),
    max_output_price: atMost('max_output_price', (m) => perMillion(m, 'completion')),
    min_age_days: atLeast('min_age_days', ageDays, true),
    max_age_days: atMost('max_age_days', ageDays, true),
    arch: (raw) => (m) => String((m.architecture as { tokenizer?: string }).tokenizer ?? '').toLowerCase() === raw.trim().toLowerCase(),
    model_authors: (raw) => (m) => list(raw).includes(String(m.id).split('/')[0]!.toLowerCase()),
    providers: (raw) => (m) => facts.providersOf(String(m.id)).some((p) => list(raw).includes(p.toLowerCase())),
    // Every fake endpoint keeps no prompt; an upstream's, the gateway cannot vouch for (GET /v1/endpoints/zdr lists the same).
    zdr: (raw) => (oneOf('zdr', raw, ['true']), (m) => !facts.upstream?.(String(m.id))),
    distillable: (raw) => (oneOf('distillable', raw, ['true', 'false']) === 'false' ? () => true : () => false),
    region: none((raw) => oneOf('region', raw, ['eu', 'us'])),
    category: none((raw) => oneOf('category', raw, CATEGORIES)),
    min_tool_success_rate: none((raw) => number('min_tool_success_rate', raw, 0, 1)),
    max_tool_success_rate: none((raw) => number('max_tool_success_rate', raw, 0, 1)),
  };
  for (const score of SCORES) for (const bound of ['min', 'max']) out[`${bound}_${score}`] = none((raw) => number(`${bound}_${score}`, raw, 0));
  return out;
}

const average = (m: Listed) => (perMillion(m, 'prompt') + perMillion(m, 'completion')) / 2;
/** The sorts the emulator's facts answer; the others keep the list's order. */
const ORDERS: Record<string, (a: Listed, b: Listed) => number> = {
  'pricing-low-to-high': (a, b) => average(a) - average(b),
  'pricing-high-to-low': (a, b) => average(b) - average(a),
  'context-high-to-low': (a, b) => Number(b.context_length) - Number(a.context_length),
  newest: (a, b) => Number(b.created) - Number(a.created),
};

/** The listed models the query's filters keep, in the order its `sort` asks. */
export function filteredModels(url: URL, listed: Listed[], facts: FilterFacts): Listed[] {
  const tests = filters(facts);
  const keep: ((m: Listed) => boolean)[] = [];
  for (const [name, value] of url.searchParams) {
    const test = tests[name];
    // An empty value filters by nothing, as the service's own links send them.
    if (test && value !== '') keep.push(test(value));
  }
  const kept = listed.filter((m) => keep.every((k) => k(m)));
  const sort = url.searchParams.get('sort');
  if (!sort) return kept;
  const order = ORDERS[oneOf('sort', sort, SORTS)];
  return order ? kept.sort(order) : kept;
}
