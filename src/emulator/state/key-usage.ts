/**
 * A key's settings (limit, reset, expiry, disabled) and what its requests cost, as the management
 * API (`/v1/keys`) sets them and `GET /v1/key` reports them; both stores keep them on the key record.
 */
import { createHash } from 'node:crypto';
import { round } from '../models/models.js';
import { randomHex } from '../http/ids.js';
import type { KeyKind, KeyRecord, KeySettings, LimitReset } from './store-api.js';

export const LIMIT_RESETS: readonly LimitReset[] = ['daily', 'weekly', 'monthly'];

const DAY_MS = 86_400_000;
/** Days of usage kept per key: enough for a month's. */
const KEPT_DAYS = 40;

/** The last day made, and the ms it spans: a paid request asks for today's (a Date and two strings each, before). */
let lastDay = { from: 0, to: 0, day: '1970-01-01' };

/** The UTC day of `ms`, as 'YYYY-MM-DD'. */
function dayOf(ms: number): string {
  if (ms >= lastDay.from && ms < lastDay.to) return lastDay.day;
  const from = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
  const day = new Date(ms).toISOString().slice(0, 10);
  if (Number.isFinite(from)) lastDay = { from, to: from + DAY_MS, day };
  return day;
}

/** The first day of the period holding `now`: the UTC day, the week from Monday, the month. */
export function periodStart(reset: LimitReset, now: number): string {
  if (reset === 'daily') return dayOf(now);
  if (reset === 'monthly') return `${dayOf(now).slice(0, 8)}01`;
  const sinceMonday = (new Date(now).getUTCDay() + 6) % 7;
  return dayOf(now - sinceMonday * DAY_MS);
}

/** USD the key's requests cost since `from` (a day, inclusive), or in all. */
export function usageSince(r: KeyRecord, from?: string): number {
  if (from === undefined) return r.usage ?? 0;
  let sum = 0;
  for (const [day, cost] of Object.entries(r.usage_days ?? {})) if (day >= from) sum += cost;
  return round(sum);
}

/** Each key's hash, made once: a paid request's journal line names its key by it. */
const hashes = new WeakMap<KeyRecord, string>();
const hashOf = (r: KeyRecord): string => {
  let hash = hashes.get(r);
  if (hash === undefined) hashes.set(r, (hash = keyHash(r.key)));
  return hash;
};

/**
 * Counts a cost on the key (negative: given back), on today's UTC day; days older than a month and
 * more are let go (when a day begins). Returns what the charges journal keeps of it: the key's hash and the time.
 */
export function countUsage(r: KeyRecord, cost: number, now: number): { k: string; t: number } {
  const mark = { k: hashOf(r), t: now };
  if (cost === 0) return mark;
  r.usage = round((r.usage ?? 0) + cost);
  const days = (r.usage_days ??= {});
  const today = dayOf(now);
  const before = days[today];
  days[today] = round((before ?? 0) + cost);
  if (before !== undefined) return mark;
  const oldest = dayOf(now - KEPT_DAYS * DAY_MS);
  for (const day of Object.keys(days)) if (day < oldest) delete days[day];
  return mark;
}

/** What is left of the key's limit in its current period; null for a key without one. */
export function limitRemaining(r: KeyRecord, now: number): number | null {
  if (r.limit === undefined || r.limit === null) return null;
  return round(Math.max(0, r.limit - usageSince(r, r.limit_reset ? periodStart(r.limit_reset, now) : undefined)));
}

/** Why a key may not be used now (disabled, or past its expiry), or undefined. */
export function keyRefusal(r: KeyRecord, now: number): string | undefined {
  if (r.disabled) return 'API key is disabled';
  if (r.expires_at && Date.parse(r.expires_at) <= now) return 'API key has expired';
  return undefined;
}

/** A new key's text (`sk-rt-v1-…`, `sk-rt-mgmt-…`, `sk-rt-op-…`). */
export const newKey = (kind: KeyKind) => `sk-rt-${kind === 'management' ? 'mgmt' : kind === 'operator' ? 'op' : 'v1'}-${randomHex(24)}`;

/** The key's id in the management API: the SHA-256 of its text, in hex (the text itself is shown once). */
export const keyHash = (key: string) => createHash('sha256').update(key).digest('hex');

/** Sets the given settings on the record (a change stamps `updated_at`). */
export function applySettings(r: KeyRecord, s: KeySettings, now: number): void {
  for (const [name, value] of Object.entries(s)) if (value !== undefined) (r as unknown as Record<string, unknown>)[name] = value;
  r.updated_at = Math.floor(now / 1000);
}

/**
 * What a kill -9 left in the charges journal only, in order: a charge by `charge`, and a key's usage
 * counted again on its day. A line carries a key's usage as `kh` (its hash) and `kc` (its cost) beside
 * its own charge; older versions wrote a line of its own (`k`, its cost `c`, charging nothing).
 */
export function replayKeyUsage<E extends { c: number; k?: string; kh?: string; kc?: number; t?: number }>(keys: KeyRecord[], entries: E[], charge: (e: E) => void): void {
  let byHash: Map<string, KeyRecord> | undefined;
  const count = (hash: string, cost: unknown, t: unknown) => {
    const r = (byHash ??= new Map(keys.map((k) => [keyHash(k.key), k]))).get(hash);
    if (r && typeof cost === 'number' && Number.isFinite(cost)) countUsage(r, cost, typeof t === 'number' && Number.isFinite(t) ? t : Date.now());
  };
  for (const e of entries) {
    if (typeof e.k === 'string') {
      count(e.k, e.c, e.t);
      continue;
    }
    charge(e);
    if (typeof e.kh === 'string') count(e.kh, e.kc, e.t);
  }
}
