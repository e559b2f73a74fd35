import { bad, checkCutoffs, checkModelsList, checkProviderKeys, checkSort } from '../http/validate.js';
import { MODEL_ID_PATTERN, MODELS, type ModelKind } from '../models/models.js';
import type { LocalModels } from '../providers/local.js';
import type { ProviderAdapter, ProviderModel } from '../providers/types.js';
import type { Attempt } from './attempt.js';
import { notAModelOfKind } from '../models/model-kind-words.js';
import { rulesOf, whyNot } from './provider-rules.js';
import { namedOut, withoutFallbacks, type Named } from './provider-choice.js';
import { measurePrefsOf, measureSorted, noteMeasures, preferredFirst, type MeasurePrefs } from './measured-order.js';
import type { Measured, Measures } from './measures.js';

type Body = Record<string, unknown>;

/** One way to answer: a model on a provider (its slug), through an adapter. */
export interface Candidate {
  adapter: ProviderAdapter;
  slug: string;
  model: ProviderModel;
  /**
   * The prices the model list shows for the model (its first provider's, 0 when that one has none; a
   * fake model's own): what a hang-up on a provider without prices is charged at (hang-up.ts).
   */
  listed?: { prompt: number; completion: number };
  /** Its measures when the request ranked by them (measured-order.ts): null, unmeasured; absent, not looked at. */
  measured?: Measured | null;
}

const FREE = { prompt: 0, completion: 0 };

interface Prefs extends Named {
  sort?: string;
  /** `sort.partition: "none"` (or the deprecated `route: "sort"`): every model's endpoints sorted together. */
  together: boolean;
  measures?: MeasurePrefs;
}

function prefsOf(provider: unknown, route: unknown): Prefs {
  if (provider === undefined || provider === null) return { ignore: [], order: [], allowFallbacks: true, together: false };
  if (typeof provider !== 'object' || Array.isArray(provider)) bad('provider must be an object');
  const p = provider as Body;
  checkProviderKeys(p);
  for (const flag of ['allow_fallbacks', 'zdr']) {
    if (p[flag] !== undefined && p[flag] !== null && typeof p[flag] !== 'boolean') bad(`provider.${flag} must be a boolean`);
  }
  const list = (field: string): string[] | undefined => {
    const v = p[field];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) bad(`provider.${field} must be an array of provider slugs`);
    return v as string[];
  };
  checkSort(p.sort);
  const sort = typeof p.sort === 'string' ? p.sort : ((p.sort as Body | null)?.by as string | undefined);
  // No meaning the gateway could honour: it knows nothing of its providers' exactness.
  if (sort === 'exacto') bad('provider.sort "exacto": this gateway cannot tell which providers are exact; sort by "price", "latency" or "throughput", or rank them with provider.order');
  checkCutoffs(p);
  const partition = (p.sort as Body | null)?.partition ?? (route === 'sort' ? 'none' : route === 'fallback' ? 'model' : undefined);
  if (partition !== undefined && partition !== null && partition !== 'model' && partition !== 'none') bad('provider.sort.partition must be one of model, none');
  return { only: list('only'), ignore: list('ignore') ?? [], order: list('order') ?? [], allowFallbacks: p.allow_fallbacks !== false, sort, together: partition === 'none', measures: measurePrefsOf(p, sort) };
}

/** The models asked, in order: `model`, then the `models` fallbacks. */
export function modelChain(body: Body): string[] {
  // Most requests name one model and no fallbacks: no Set and no arrays copied for them (three calls a request).
  if (body.models === undefined) return typeof body.model === 'string' && body.model ? [body.model] : [];
  const models = Array.isArray(body.models) ? (body.models as string[]) : [];
  return [...new Set([body.model as string | undefined, ...models].filter((m): m is string => typeof m === 'string' && !!m))];
}

/** Each adapter's models by kind and id, made once per list it gives (the routing scanned every model of every provider per request). */
const indexes = new WeakMap<ProviderModel[], Map<string, Map<string, ProviderModel[]>>>();
function modelsOf(adapter: ProviderAdapter, kind: string, id: string): ProviderModel[] {
  const models = adapter.models();
  let index = indexes.get(models);
  if (!index) {
    index = new Map();
    for (const m of models) {
      let byId = index.get(m.kind ?? 'chat');
      if (!byId) index.set(m.kind ?? 'chat', (byId = new Map()));
      const same = byId.get(m.id);
      if (same) same.push(m);
      else byId.set(m.id, [m]);
    }
    indexes.set(models, index);
  }
  return index.get(kind)?.get(id) ?? NONE;
}
const NONE: ProviderModel[] = [];

/**
 * The price sort's order: by configured price (a fake model at its listed one), the cheapest first; a provider
 * without prices after every priced one; at a tie, the order before the sort (the providers file's).
 */
function cheaper(a: Candidate, b: Candidate, local: LocalModels | undefined): number {
  const pa = priceOf(a, local), pb = priceOf(b, local);
  return pa === pb ? 0 : pa === undefined ? 1 : pb === undefined ? -1 : pa - pb;
}
function priceOf(c: Candidate, local: LocalModels | undefined): number | undefined {
  const prices = c.model.prices ?? (c.adapter === local ? c.listed : undefined);
  return prices && prices.prompt + prices.completion;
}
const priceSorted = (list: Candidate[], local: LocalModels | undefined) => list.map((c, i) => ({ c, i })).sort((x, y) => cheaper(x.c, y.c, local) || x.i - y.i).map((x) => x.c);

export interface Catalog {
  upstreams: ProviderAdapter[];
  local?: LocalModels;
  /** What the gateway measured of its providers (measures.ts): none, nothing ranked by them. */
  measures?: Measures;
}

/**
 * Every candidate for a request, in the order they are tried: its models in turn, and for each the
 * providers that serve it under `provider.only / ignore / order / sort / allow_fallbacks`; the
 * provider that last served the session (`sticky`) first where it is allowed and no `order` is given. A model of the chain
 * that is no model here (malformed, or served by nobody) is passed over as a failed attempt is, into
 * `passed` (provider `none`, status 400), and the fallback list goes on to the next: the spec says only
 * that `models` is "used for fallback". The request is a 400 on the first such model when none is one,
 * and on a `models` list longer than the service takes (checkModelsList).
 */
export function candidatesFor(body: Body, catalog: Catalog, sticky?: (modelId: string) => string | undefined, kind: 'chat' | 'embedding' | 'speech' = 'chat', passed: Attempt[] = []): Candidate[] {
  checkModelsList(body);
  const prefs = prefsOf(body.provider, body.route);
  const rules = rulesOf(body, kind);
  let chain = modelChain(body);
  if (!chain.length) {
    // Without the fake models there is no default: name one the file serves (a bare "model is required" named none).
    if (!catalog.local) bad(noDefaultModel(catalog, kind));
    chain = ['local/echo'];
  }
  const out: Candidate[] = [];
  const unknown: Attempt[] = [];
  let known = 0;
  for (const id of chain) {
    if (!MODEL_ID_PATTERN.test(id)) {
      unknown.push({ provider: 'none', model: id, error: `model must look like <author>/<slug>, got ${JSON.stringify(id)}`, status: 400, unknown: true });
      continue;
    }
    let offered: Candidate[] = [];
    for (const adapter of catalog.upstreams) for (const model of modelsOf(adapter, kind, id)) offered.push({ adapter, slug: adapter.name, model });
    if (!offered.length && catalog.local) {
      const spec = MODELS.find((m) => m.id === id && m.kind === kind);
      const listed = spec ? { prompt: spec.promptPrice, completion: spec.completionPrice } : FREE;
      offered = catalog.local.slugs(id, kind).map((slug) => ({ adapter: catalog.local!, slug, model: { id, upstream: id, kind }, listed }));
    } else {
      // Its first provider's prices that has them: one without (its upstream's own cost charged) listed the model free.
      const listed = offered.find((c) => c.model.prices)?.model.prices ?? FREE;
      for (const c of offered) c.listed = listed;
    }
    if (!offered.length) {
      unknown.push({ provider: 'none', model: id, error: notAModelOfKind(id, kind, kindElsewhere(catalog, id)), status: 400, unknown: true });
      continue;
    }
    known++;
    const passOver = (c: Candidate, why: string, rule: NonNullable<Attempt['unasked']> = 'choice') => unknown.push({ provider: c.slug, model: id, error: why, status: 404, unasked: rule });
    let allowed = prefs.only || prefs.ignore.length ? offered.filter((c) => {
      const why = namedOut(c.slug, prefs);
      if (why) passOver(c, why, 'named');
      return !why;
    }) : offered;
    if (rules) allowed = allowed.filter((c) => {
      const not = whyNot(c, rules, c.adapter === catalog.local);
      if (not) passOver(c, not.why, not.rule);
      return !not;
    });
    if (prefs.measures && catalog.measures) noteMeasures(allowed, catalog.measures);
    if (prefs.sort === 'price') allowed = priceSorted(allowed, catalog.local);
    else if (prefs.measures?.by) allowed = measureSorted(allowed, prefs.measures.by);
    const rank = (c: Candidate) => {
      const i = prefs.order.indexOf(c.slug);
      return i < 0 ? prefs.order.length : i;
    };
    // No order: every rank the same, and the sort (stable) would change nothing.
    if (prefs.order.length) allowed = [...allowed].sort((a, b) => rank(a) - rank(b));
    // The service's rule: an explicit provider.order wins over the session's provider.
    const stuck = prefs.order.length ? undefined : sticky?.(id);
    const held = allowed.find((c) => c.slug === stuck);
    if (held) allowed = [held, ...allowed.filter((c) => c !== held)];
    out.push(...withoutFallbacks(allowed, (c) => c.slug, prefs, passOver));
  }
  if (!known) bad(unknown[0]!.error);
  // Sorted together, the fallback models' endpoints among the first's (a stable sort: each model's order kept at a tie).
  passed.push(...unknown);
  const together = !prefs.together ? out : prefs.sort === 'price' ? priceSorted(out, catalog.local) : prefs.measures?.by ? measureSorted(out, prefs.measures.by) : out;
  // Cut-offs over every model's endpoints: a fallback model's that meets them before the first's that miss (the OpenAPI's words).
  return prefs.measures ? preferredFirst(together, prefs.measures) : together;
}

function noDefaultModel(catalog: Catalog, kind: ModelKind): string {
  const served = catalog.upstreams.flatMap((a) => a.models()).find((m) => (m.kind ?? 'chat') === kind);
  return `model is required: this gateway has no default model (local_models: false)${served ? `; name one, such as ${served.id} (GET /v1/models lists them)` : ''}`;
}

/** The kind of model an id names here when it names none of the kind asked: an upstream's, else a fake one's. */
function kindElsewhere(catalog: Catalog, id: string): ModelKind | undefined {
  for (const kind of KINDS) for (const adapter of catalog.upstreams) if (modelsOf(adapter, kind, id).length) return kind;
  return catalog.local ? MODELS.find((m) => m.id === id)?.kind : undefined;
}
const KINDS = ['chat', 'embedding', 'speech'] as const;
