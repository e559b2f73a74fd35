/**
 * Holds settled by their key's spend (batches that ended naming no cost, reconcile-batch.ts; kept sends of creates never answered,
 * reconcile-sent.ts) are settled together. What a key spent in a window is every charge of it then: the calls the ledger names, the
 * batches whose cost it has (named by the service, or settled by an earlier run), the calls settled by spend, and the holds settled
 * now. So the holds of one key whose windows overlap are settled jointly over the union of their windows (widened to hold the
 * earlier settlings it meets): what the key spent there, less what the ledger already puts inside it, is split among them in
 * proportion to their completed requests (to their bounds where one's is not known), none above its bound, what one cannot take
 * going to the others. Over, never under: their sum is that spend or the sum of their bounds, whichever is less, and each batch's
 * charges lie in the union; a cost put in the ledger later for a batch charged then (`batch get` of a batch no hold joined) is
 * counted beside it (over).
 */
import type { RouterClient } from '../../client/index.js';
import { sameRoot } from '../../internal/api-root.js';
import { roundCost } from '../../internal/round-cost.js';
import { HELD } from './hold-record.js';
import { eachLedgerRecord } from './ledger-read.js';
import { CLOCK_MARGIN_MS, spendBeyondNamed, type GenerationCosts, type HeldReport, type NamedCall, type Window } from './reconcile-held.js';

/** A hold ready to be settled by the spend of its key. */
export interface KeySpendHold {
  id: string;
  key_hash: string;
  /** Where its batch's charges lie (the service's clock, margins added). */
  window: Window;
  bound: number;
  /** The requests its batch completed; undefined where not known (a send never answered). */
  completed: number | undefined;
  /** The report its outcome goes to. */
  report: HeldReport;
  /** Writes its settling line at `charged`, naming `union` as where it was charged, and lets its hold go. */
  settle(charged: number, union: Window): { time: string; model?: string | undefined };
}

/** A charge the ledger already puts in a window of a key's time. */
interface Attributed {
  window: Window;
  cost: number;
}

/** A settling spread over more than this is never widened to (a batch line seen long after its end): only taken off when inside. */
const WIDEN_AT_MOST_MS = 26 * 3_600_000;

type Line = { reconciles?: unknown; real_cost?: unknown; unsettled?: unknown; sent_after?: unknown; sent_before?: unknown; key_hash?: unknown; api_root?: unknown; cost?: unknown; batch_id?: unknown; command?: unknown; id?: unknown };

/** The ledger's charges of the keys `hashes` at `apiRoot` that name where they lie: batches' costs, settlings by spend, calls settled by spend. */
async function attributedOf(env: NodeJS.ProcessEnv, apiRoot: string, hashes: Set<string>, signal: AbortSignal): Promise<Map<string, Attributed[]>> {
  const real = new Map<string, number>();
  const held: { id: string; hash: string; window: Window }[] = [];
  const found = new Map<string, Attributed[]>();
  // A batch's lines: the latest counts (as in the budgets).
  const batches = new Map<string, { hash: string } & Attributed>();
  const settlings: ({ id: string | undefined; hash: string } & Attributed)[] = [];
  await eachLedgerRecord(env, (r: Line) => {
    if (typeof r.reconciles === 'string') {
      if (typeof r.real_cost === 'number') real.set(r.reconciles, r.real_cost);
      return;
    }
    if (typeof r.key_hash !== 'string' || !hashes.has(r.key_hash)) return;
    if (typeof r.api_root === 'string' && !sameRoot(r.api_root, apiRoot)) return;
    const start = Date.parse(typeof r.sent_after === 'string' ? r.sent_after : '');
    const end = Date.parse(typeof r.sent_before === 'string' ? r.sent_before : '');
    if (!(start <= end)) return;
    const window = { start: start - CLOCK_MARGIN_MS, end: end + CLOCK_MARGIN_MS };
    if (typeof r.id === 'string' && r.id.startsWith(HELD) && r.unsettled !== undefined) held.push({ id: r.id, hash: r.key_hash, window });
    else if (typeof r.cost === 'number' && Number.isFinite(r.cost)) {
      if (typeof r.batch_id === 'string') batches.set(r.batch_id, { hash: r.key_hash, window, cost: r.cost });
      else if (r.command === 'usage --reconcile') settlings.push({ id: typeof r.id === 'string' ? r.id : undefined, hash: r.key_hash, window, cost: r.cost });
    }
  }, signal);
  // A settling of a kept send taken back since (its batch joined after all: sent-create.ts unsettleSend()) counts what it was taken to.
  for (const l of settlings) found.set(l.hash, [...(found.get(l.hash) ?? []), { window: l.window, cost: (l.id !== undefined ? real.get(l.id) : undefined) ?? l.cost }]);
  for (const b of batches.values()) found.set(b.hash, [...(found.get(b.hash) ?? []), { window: b.window, cost: b.cost }]);
  // A call counted at its bound and settled since (by its key's spend): what it was settled at.
  for (const h of held) {
    const cost = real.get(h.id);
    if (cost !== undefined) found.set(h.hash, [...(found.get(h.hash) ?? []), { window: h.window, cost }]);
  }
  return found;
}

/** `total` split by `weights`, none above its `caps`, what one cannot take going to the others. */
export function splitCapped(total: number, weights: number[], caps: number[]): number[] {
  const out = caps.map(() => 0);
  let open = caps.map((_, i) => i);
  let left = total;
  while (open.length && left > 1e-12) {
    const sum = open.reduce((a, i) => a + weights[i]!, 0);
    const shareOf = (i: number) => (sum > 0 ? (left * weights[i]!) / sum : left / open.length);
    const full = open.filter((i) => shareOf(i) >= caps[i]! - out[i]!);
    if (full.length === 0) {
      for (const i of open) out[i]! += shareOf(i);
      break;
    }
    for (const i of full) {
      left -= caps[i]! - out[i]!;
      out[i] = caps[i]!;
    }
    open = open.filter((i) => !full.includes(i));
  }
  return out;
}

/** Windows that overlap, merged: each group's union and what it holds. */
function grouped<T extends { window: Window }>(items: T[]): { union: Window; items: T[] }[] {
  const groups: { union: Window; items: T[] }[] = [];
  for (const it of [...items].sort((a, b) => a.window.start - b.window.start)) {
    const last = groups.at(-1);
    if (last && it.window.start <= last.union.end) {
      last.union.end = Math.max(last.union.end, it.window.end);
      last.items.push(it);
    } else groups.push({ union: { ...it.window }, items: [it] });
  }
  return groups;
}

export interface JointOptions {
  env: NodeJS.ProcessEnv;
  apiRoot: string;
  named: () => Promise<NamedCall[]>;
  client: RouterClient;
  manager: RouterClient;
  signal: AbortSignal;
}

/** Settles `holds` (their keys managed, their windows past) by their keys' spend, jointly where their windows overlap; else says they wait. */
export async function settleJointly(o: JointOptions, holds: KeySpendHold[]): Promise<void> {
  if (holds.length === 0) return;
  const costs: GenerationCosts = new Map();
  const attributed = await attributedOf(o.env, o.apiRoot, new Set(holds.map((h) => h.key_hash)), o.signal);
  for (const hash of new Set(holds.map((h) => h.key_hash))) {
    const lines = attributed.get(hash) ?? [];
    const items = [...holds.filter((h) => h.key_hash === hash).map((h) => ({ window: h.window, hold: h })), ...lines.filter((l) => l.window.end - l.window.start <= WIDEN_AT_MOST_MS).map((l) => ({ window: l.window, hold: undefined }))];
    for (const g of grouped(items)) {
      const mine = g.items.flatMap((i) => (i.hold ? [i.hold] : []));
      if (mine.length === 0) continue;
      const u = g.union;
      const inside = lines.filter((l) => l.window.start >= u.start && l.window.end <= u.end).reduce((a, l) => a + l.cost, 0);
      const { requests, named, left } = await spendBeyondNamed({ client: o.client, manager: o.manager, named: o.named, signal: o.signal, costs }, hash, u);
      const unattributed = left - inside;
      // The service has not counted the batches' requests (or the calls named) yet: asked again by a later run.
      if (requests < named + mine.reduce((a, h) => a + (h.completed ?? 0), 0) || unattributed < -1e-9) {
        for (const h of mine) h.report.waiting.push(h.id);
        continue;
      }
      const byRequests = mine.every((h) => h.completed !== undefined && h.completed > 0);
      const shares = splitCapped(Math.max(0, unattributed), mine.map((h) => (byRequests ? h.completed! : h.bound)), mine.map((h) => h.bound));
      mine.forEach((h, i) => {
        const charged = Math.min(h.bound, roundCost(shares[i]!));
        const { time, model } = h.settle(charged, u);
        h.report.settled.push({ id: h.id, time, ...(model ? { model } : {}), bound: h.bound, charged });
      });
    }
  }
}
