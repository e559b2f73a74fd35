import type { Measured, Measures, Percentiles } from './measures.js';

type Body = Record<string, unknown>;
type Cutoffs = Partial<Record<keyof Percentiles, number | null>>;

/** A candidate as ranked here (candidates.ts's `Candidate`): a model at a provider, and its measures once looked at. */
interface Ranked {
  slug: string;
  model: { id: string };
  measured?: Measured | null;
  /** Unmeasured, and an attempt already in flight there to measure it. */
  exploring?: boolean;
}

/** What of `provider` asks for the measures (measures.ts): a sort by one, and the preferred cut-offs. */
export interface MeasurePrefs {
  by?: 'latency' | 'throughput';
  maxLatency?: Cutoffs;
  minThroughput?: Cutoffs;
}

/** The request's asks of the measures (checkCutoffs made sure of their shape); undefined when it makes none. */
export function measurePrefsOf(p: Body, sort: string | undefined): MeasurePrefs | undefined {
  const by = sort === 'latency' || sort === 'throughput' ? sort : undefined;
  const maxLatency = cutoffs(p.preferred_max_latency), minThroughput = cutoffs(p.preferred_min_throughput);
  return by || maxLatency || minThroughput ? { by, maxLatency, minThroughput } : undefined;
}

/** A number is the p50's cut-off. */
const cutoffs = (v: unknown): Cutoffs | undefined => (typeof v === 'number' ? { p50: v } : v && typeof v === 'object' ? (v as Cutoffs) : undefined);

/** Each candidate's measures, as they were when it was ranked (null: unmeasured), for `router_metadata`. */
export function noteMeasures(list: Ranked[], measures: Measures): void {
  for (const c of list) {
    c.measured = measures.of(c.slug, c.model.id) ?? null;
    c.exploring = !c.measured && measures.beingExplored(c.slug, c.model.id);
  }
}

/**
 * Lowest p50 latency or highest p50 throughput first; one unmeasured (in the window, on that measure) before
 * every measured one, so it gets measured, unless an attempt is already measuring it: then after them all, so
 * a burst does not all wait on a provider no one has timed. At a tie, the order before the sort (the file's).
 */
export function measureSorted<C extends Ranked>(list: C[], by: 'latency' | 'throughput'): C[] {
  const key = (c: C) => {
    const p50 = by === 'latency' ? c.measured?.latency.p50 : c.measured?.throughput?.p50;
    if (p50 === undefined) return c.exploring ? Infinity : -Infinity;
    return by === 'latency' ? p50 : -p50;
  };
  return list.map((c, i) => ({ c, i, k: key(c) })).sort((x, y) => (x.k === y.k ? x.i - y.i : x.k < y.k ? -1 : 1)).map((x) => x.c);
}

/** The candidates that meet the preferred cut-offs (every percentile named; an unmeasured one meets them), then those that miss: none dropped. */
export function preferredFirst<C extends Ranked>(list: C[], prefs: MeasurePrefs): C[] {
  if (!prefs.maxLatency && !prefs.minThroughput) return list;
  const meets = (c: C) => within(c.measured?.latency, prefs.maxLatency, 1) && within(c.measured?.throughput, prefs.minThroughput, -1);
  return [...list.filter(meets), ...list.filter((c) => !meets(c))];
}

/** Whether every cut-off is met: at most it (`sign` 1: a latency), at least it (-1: a throughput). */
function within(measured: Percentiles | undefined, cut: Cutoffs | undefined, sign: number): boolean {
  if (!cut || !measured) return true;
  return (Object.keys(cut) as (keyof Percentiles)[]).every((k) => cut[k] === null || cut[k] === undefined || sign * (measured[k] - cut[k]) <= 0);
}
