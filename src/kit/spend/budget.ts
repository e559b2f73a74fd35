/**
 * Budgets: what a profile may spend a day and a calendar month (UTC), against what the usage
 * ledger holds for it. The ledger is read line by line and summed as it is read, never held whole.
 */
import { NegativeCosts } from './negative-costs.js';
import type { Source } from '../../config/settings.js';
import { ledgerPath, type UsageRecord } from './ledger.js';
import { InvalidAmount, type Budget, type BudgetName } from './errors.js';
import { usd, usdWritten } from './cost-bound.js';
import { roundCost } from '../../internal/round-cost.js';

export type { Budget, BudgetName };

/** What the budgets are read from: a profile's settings (flags > env > profile), or a program's own. */
export interface BudgetSettings {
  profile: string;
  /** USD amounts as text ("2", "0.50"). */
  dailyBudget?: string | undefined;
  monthlyBudget?: string | undefined;
  from: { dailyBudget?: Source | undefined; monthlyBudget?: Source | undefined };
}

/**
 * Budgets a program sets itself, counted against the ledger's records of `profile`: messages name
 * each as `budgets.daily` or `budgets.monthly` (the CLI's come from its settings, naming their source).
 */
export function budgetLimits(o: { profile: string; daily?: number | string | undefined; monthly?: number | string | undefined }): BudgetSettings {
  const text = (n: number | string | undefined) => (n === undefined ? undefined : String(n));
  return {
    profile: o.profile,
    dailyBudget: text(o.daily),
    monthlyBudget: text(o.monthly),
    from: { dailyBudget: { kind: 'flag', name: 'budgets.daily' }, monthlyBudget: { kind: 'flag', name: 'budgets.monthly' } },
  };
}

/** An amount of USD as a setting or a flag holds it: a plain non-negative decimal. */
export function usdAmount(text: string, from: string): number {
  return Number(usdText(text, from));
}

/**
 * The amount's text as a budget counts it: costs are counted to ten decimals (round-cost.ts), so the
 * digits past the tenth are dropped, never rounded up (a budget is never more than was given). A
 * computed amount's float noise (0.0016875000000000002) is then the amount meant.
 */
export function usdText(text: string, from: string): string {
  const t = text.trim();
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(t) || !Number.isFinite(Number(t))) throw new InvalidAmount(`${from} is an amount of USD such as 2 or 0.50, got "${text}"`);
  const [whole, decimals = ''] = t.split('.');
  const kept = decimals.slice(0, 10).replace(/0+$/, '');
  return decimals.length <= 10 ? t : kept ? `${whole || '0'}.${kept}` : whole || '0';
}

export function startOfDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

export function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

export interface Spent {
  today: number;
  month: number;
  /** Lines of the ledger no record could be read from (torn, overwritten), or not as router writes one (a cost, a time, no profile): not counted. */
  damaged?: number | undefined;
  /** The first of those lines' numbers (from 1), to name them. */
  damagedLines?: number[] | undefined;
}

/** How many damaged lines are named by number. */
const NAMED_LINES = 5;

/**
 * Sums what a profile spent today and this month (UTC) from the ledger's records, fed in order. A
 * batch is recorded each time it is seen ended: it counts once, when it was first seen so (its
 * spend happened then; a later `batch get` does not move it to today), at its latest figures.
 */
export function spendCounter(profile: string, now = new Date()): { add: (r: UsageRecord, line?: number) => void; total: () => Spent } {
  const day = startOfDay(now).getTime();
  const month = startOfMonth(now).getTime();
  const spent = { today: 0, month: 0 };
  const batches = new Map<string, { at: number; cost: number }>();
  const negatives = new NegativeCosts();
  const refused: number[] = [];
  const count = (at: number, cost: number) => {
    if (at >= month) spent.month += cost;
    if (at >= day) spent.today += cost;
  };
  const add = (r: UsageRecord, line = 0) => {
    if (r.profile !== profile || typeof r.cost !== 'number' || !Number.isFinite(r.cost)) return;
    const at = Date.parse(r.time);
    if ((at >= month || r.batch_id) && !negatives.take(r)) return void refused.push(line);
    if (r.batch_id) batches.set(r.batch_id, { at: batches.get(r.batch_id)?.at ?? at, cost: r.cost });
    else if (at >= month) count(at, r.cost);
  };
  const total = (): Spent => {
    const sum = { ...spent };
    for (const b of batches.values()) {
      if (b.at >= month) sum.month += b.cost;
      if (b.at >= day) sum.today += b.cost;
    }
    return { today: roundCost(sum.today), month: roundCost(sum.month), ...(refused.length ? { damaged: refused.length, damagedLines: refused.slice(0, NAMED_LINES) } : {}) };
  };
  return { add, total };
}


/** What the ledger holds for this profile today and this month (UTC), summed as it is read. */
export async function spentBy(env: NodeJS.ProcessEnv, profile: string, now = new Date(), signal?: AbortSignal): Promise<Spent> {
  const counter = spendCounter(profile, now);
  // Loaded only where a budget is set: a plain call reads no ledger.
  const { eachLedgerRecord } = await import('./ledger-read.js');
  const lines: number[] = [];
  const damaged = await eachLedgerRecord(env, counter.add, signal, (line) => lines.length < NAMED_LINES && lines.push(line));
  return withDamaged(counter.total(), damaged, lines);
}

/** `spent` with the reader's damaged lines added to those the counter refused. */
export function withDamaged(spent: Spent, damaged: number, lines: number[]): Spent {
  const all = damaged + (spent.damaged ?? 0);
  if (!all) return spent;
  return { ...spent, damaged: all, damagedLines: [...lines, ...(spent.damagedLines ?? [])].sort((a, b) => a - b).slice(0, NAMED_LINES) };
}

export interface BudgetRead {
  now?: Date | undefined;
  /** What was spent, already summed by the caller's own read of the ledger. */
  known?: Spent | undefined;
  /** Ctrl-C: stops the read of the ledger. */
  signal?: AbortSignal | undefined;
  /** What holds keep past their process (Held.kept), read under the budgets' lock; else read here, nothing removed. */
  kept?: number | undefined;
  /** The ledger has damaged lines, whose cost is not counted (docs/config.md says why); `at`: the first lines' numbers. */
  damaged?: ((lines: number, ledger: string, at: number[]) => void) | undefined;
}

/** The budgets the settings set, with what was spent against each. */
export async function budgetsFor(env: NodeJS.ProcessEnv, settings: BudgetSettings, { now = new Date(), known, signal, kept, damaged }: BudgetRead = {}): Promise<Budget[]> {
  const set: [BudgetName, 'dailyBudget' | 'monthlyBudget'][] = [
    ['daily_budget', 'dailyBudget'],
    ['monthly_budget', 'monthlyBudget'],
  ];
  const given = set.filter(([, key]) => settings[key] !== undefined);
  if (given.length === 0) return [];
  const spent = known ?? (await spentBy(env, settings.profile, now, signal));
  if (spent.damaged) damaged?.(spent.damaged, ledgerPath(env), spent.damagedLines ?? []);
  // Held past their processes (batches under way, costs the ledger could not take): as good as spent.
  const held = roundCost(kept ?? (await import('./budget-hold.js')).heldByOthers(env, settings.profile, undefined, now.getTime(), false).kept ?? 0);
  const { sourceName } = await import('../../config/settings.js');
  return given.map(([name, key]) => {
    const value = settings[key]!;
    const from = sourceName(settings.from[key]!);
    const daily = name === 'daily_budget';
    const start = daily ? startOfDay(now) : startOfMonth(now);
    const resets = daily ? new Date(start.getTime() + 86_400_000) : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    return { name, from, limit: usdAmount(value, from), spent: roundCost((daily ? spent.today : spent.month) + held), kept: held, resets };
  });
}

/** The line of a budget that is used up. */
export function reachedLine(b: Budget, ignoreBudget = '--ignore-budget'): string {
  const period = b.name === 'daily_budget' ? 'today' : 'this month';
  return `${b.name} of ${usdWritten(b.limit)} reached (${b.from}): ${usd(b.spent)} spent ${period} (UTC)${keptPart(b)}; it resets at ${b.resets.toISOString()} (${ignoreBudget} for one call)`;
}

/** How a budget's spend says the part of it not in the ledger, if any: `router usage` and the checks say it alike. */
export function keptPart(b: Pick<Budget, 'kept'>): string {
  return b.kept > 0 ? `, ${usd(b.kept)} of it held by batches not yet seen ended or calls the ledger could not take` : '';
}
