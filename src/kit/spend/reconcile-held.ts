/**
 * `usage --reconcile` for calls counted at their bound before their answer named them (`held-…` lines: a process
 * killed, or a call lost, before the generation id came). The service has no record of them by any name the CLI
 * knows; it does say what a key spent in a time range (`POST /v1/analytics/query`, a management key). A call sent
 * between `sent_after` and `sent_before` with key K cost at most what K spent then less what the calls named in the
 * ledger (K's, made then, by the service's own `created_at`) cost: everything else is never below 0. Its line is
 * settled at that, never above its bound, once the range is an hour old (the service has counted all of it by then).
 */
import type { RouterClient } from '../../client/index.js';
import { APIError } from '../../client/errors.js';
import type { UsageRecord } from './ledger.js';
import { roundCost } from '../../internal/round-cost.js';
import { lookupWithin } from './lookup-bound.js';

/** A range is asked about once it ended this long ago: a generation is counted by then (a whole answer read to its end after its caller went too). */
export const SETTLE_HELD_AFTER_MS = 60 * 60 * 1000;
/** Added to each side of a range: the service's clock and this one's may differ. */
export const CLOCK_MARGIN_MS = 60 * 1000;
/** A call named in the ledger may have begun in the range if it ended (its line's time) this long after it at most. */
export const LONGEST_CALL_MS = 60 * 60 * 1000;

export interface HeldSettled {
  id: string;
  time: string;
  model?: string | undefined;
  bound: number;
  charged: number;
}

export interface HeldReport {
  settled: HeldSettled[];
  /** Sent less than SETTLE_HELD_AFTER_MS ago: settled by a later run. */
  waiting: string[];
  /** Why the others stay at their bound (no key named, no management key, a key it does not manage), by call. */
  unsettled: { id: string; why: string }[];
}

/** A call of the ledger named by its generation, with the key it was sent with. */
export interface NamedCall {
  id: string;
  time: string;
  key_hash: string;
}

export interface Window {
  start: number;
  end: number;
}

export interface SettleHeldOptions {
  held: UsageRecord[];
  /** The ledger's calls named by their generation, read when asked (after the key's spend: a call written meanwhile is not taken for another's charge). */
  named: () => Promise<NamedCall[]>;
  client: RouterClient;
  /** A client with the management key, where one is set. */
  manager?: RouterClient;
  now: number;
  limit: number;
  signal: AbortSignal;
  /** Writes the settling line (throws where the ledger cannot take it). */
  write: (r: UsageRecord, charged: number) => void;
}

/** Settles what it can of `held`, oldest first, at most `limit`; returns the report and how many it asked about. */
export async function settleHeld(o: SettleHeldOptions): Promise<{ report: HeldReport; checked: number }> {
  const report: HeldReport = { settled: [], waiting: [], unsettled: [] };
  const costs: GenerationCosts = new Map();
  const ask = asker(o, 'call');
  for (const r of o.held) {
    const id = r.id!;
    const sentBefore = Date.parse(r.sent_before ?? '');
    const sentAfter = Date.parse(r.sent_after ?? '');
    if (typeof r.key_hash !== 'string' || !(sentAfter <= sentBefore)) {
      report.unsettled.push({ id, why: 'its line names no key or no time it was sent (written by a library program, or an older router)' });
      continue;
    }
    if (o.now - sentBefore < SETTLE_HELD_AFTER_MS) {
      report.waiting.push(id);
      continue;
    }
    const not = await ask.whyNot(r.key_hash);
    if (not === 'stop') break;
    if (not) {
      report.unsettled.push({ id, why: not });
      continue;
    }
    const w = { start: sentAfter - CLOCK_MARGIN_MS, end: sentBefore + CLOCK_MARGIN_MS };
    const { requests, named, left } = await spendBeyondNamed({ ...o, manager: o.manager!, costs }, r.key_hash, w);
    // Fewer requests than the ledger names in the range: the service has not counted them all yet.
    if (named > requests || left < -1e-9) {
      report.waiting.push(id);
      continue;
    }
    const bound = typeof r.cost === 'number' ? r.cost : 0;
    // To the ten decimals costs are counted to (the service's sums are rounded there too).
    const charged = Math.min(bound, roundCost(Math.max(0, left)));
    const settledAt = requests === named ? 0 : charged;
    o.write(r, settledAt);
    report.settled.push({ id, time: r.time, ...(r.model ? { model: r.model } : {}), bound, charged: settledAt });
  }
  return { report, checked: ask.checked() };
}

export type Asker = ReturnType<typeof asker>;

/** One run's asking about holds: at most `limit` of them, each key's management checked once. */
export function asker(o: { manager?: RouterClient | undefined; limit: number; signal: AbortSignal }, sentWith: 'call' | 'batch') {
  const managed = new Map<string, boolean>();
  let checked = 0;
  return {
    checked: () => checked,
    /** 'stop' once `limit` holds were asked about; else why a hold sent with key `hash` cannot be asked about, or undefined: ask. */
    async whyNot(hash: string): Promise<string | undefined> {
      if (!o.manager) return 'no management key is set: the key spend it is settled by needs one (router config set management_key)';
      if (checked >= o.limit) return 'stop';
      checked++;
      if (!managed.has(hash)) managed.set(hash, await manages(o.manager, hash, o.signal));
      return managed.get(hash) ? undefined : `the management key set does not manage the key the ${sentWith} was sent with`;
    },
  };
}

/** Generation ids asked about in one run, and what the service said (null: not known). */
export type GenerationCosts = Map<string, { created: number; cost: number } | null>;

export interface SpendAsk {
  client: RouterClient;
  manager: RouterClient;
  named: () => Promise<NamedCall[]>;
  signal: AbortSignal;
  costs: GenerationCosts;
}

/**
 * What the key of `hash` spent in `w` (its request count too) less what the ledger's calls of that key made in it cost, by the
 * service's own `created_at`: what any other charge of the key then can have cost at most. `named`: how many such calls.
 */
export async function spendBeyondNamed(a: SpendAsk, hash: string, w: Window): Promise<{ requests: number; named: number; left: number }> {
  const spent = await keySpent(a.manager, hash, w, a.signal);
  let named = 0;
  let namedCost = 0;
  // Read after the spend is asked: a call the spend counts whose line is in the ledger by then is taken off, not counted twice.
  for (const c of await a.named()) {
    const at = Date.parse(c.time);
    if (c.key_hash !== hash || !(at >= w.start - CLOCK_MARGIN_MS && at <= w.end + LONGEST_CALL_MS)) continue;
    if (!a.costs.has(c.id)) a.costs.set(c.id, await generationCost(a.client, c.id, a.signal));
    const g = a.costs.get(c.id);
    if (!g || !(g.created >= w.start && g.created < w.end)) continue;
    named++;
    namedCost += g.cost;
  }
  return { requests: spent.requests, named, left: spent.usage - namedCost };
}

/** Whether the management key manages the key of `hash` (`GET /v1/keys/{hash}`): else the key's spend is not its to tell. */
export async function manages(manager: RouterClient, hash: string, signal: AbortSignal): Promise<boolean> {
  try {
    await lookupWithin(manager, signal, 'GET /keys', (bounded) => manager.keys.get(hash, { signal: bounded }));
    return true;
  } catch (err) {
    if (err instanceof APIError && err.status === 404) return false;
    throw err;
  }
}

/** What the key of `hash` spent, and in how many requests, in the range (by the service's clock). */
export async function keySpent(manager: RouterClient, hash: string, w: Window, signal: AbortSignal): Promise<{ usage: number; requests: number }> {
  const body = { metrics: ['usage', 'request_count'], filters: [{ field: 'api_key', operator: 'eq', value: hash }], time_range: { start: new Date(w.start).toISOString(), end: new Date(w.end).toISOString() } };
  // Asked again where it failed on the way: a query spends nothing.
  const { data } = await lookupWithin(manager, signal, 'POST /analytics/query', (bounded) => manager.core.json<{ data?: { data?: { usage?: unknown; request_count?: unknown }[] } }>({ method: 'POST', path: '/analytics/query', body, signal: bounded, retry: 'always' }));
  const rows = Array.isArray(data?.data?.data) ? data.data.data : [];
  let usage = 0;
  let requests = 0;
  for (const row of rows) {
    usage += typeof row.usage === 'number' ? row.usage : 0;
    requests += typeof row.request_count === 'number' ? row.request_count : 0;
  }
  return { usage, requests };
}

/** A named call's charge and when the service made it; null where the service does not know it (not subtracted: never too little left). */
export async function generationCost(client: RouterClient, id: string, signal: AbortSignal): Promise<{ created: number; cost: number } | null> {
  try {
    const g = await lookupWithin(client, signal, 'GET /generation', (bounded) => client.generations.get(id, { signal: bounded }));
    const created = Date.parse(g.created_at);
    return Number.isNaN(created) ? null : { created, cost: g.total_cost };
  } catch (err) {
    if (err instanceof APIError && err.status === 404) return null;
    throw err;
  }
}
