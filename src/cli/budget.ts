/**
 * Budgets: what a profile may spend a day and a calendar month (UTC), against what the usage
 * ledger holds for it. The ledger is read line by line and summed as it is read, never held whole.
 */
import type { Settings } from '../config/settings.js';
import { BUDGET_ENV } from '../config/fields.js';
import { fromEnv } from '../config/settings.js';
import { ledgerPath, type UsageRecord } from './ledger.js';
import { usage } from './exit-codes.js';

export type BudgetName = keyof typeof BUDGET_ENV;

export interface Budget {
  name: BudgetName;
  /** Where it was set: the environment variable or the profile's setting. */
  from: string;
  limit: number;
  spent: number;
  /** When the period ends and the spend counts from zero again. */
  resets: Date;
}

/** An amount of USD as a setting or a flag holds it: a plain non-negative decimal. */
export function usdAmount(text: string, from: string): number {
  const n = /^\s*\d+(\.\d+)?\s*$|^\s*\.\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n)) throw usage(`${from} is an amount of USD such as 2 or 0.50, got "${text}"`);
  return n;
}

export function startOfDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

export function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** What the ledger holds for this profile today and this month (UTC); a batch counts once, with its latest record. */
export async function spentBy(env: NodeJS.ProcessEnv, profile: string, now = new Date()): Promise<{ today: number; month: number }> {
  const day = startOfDay(now).getTime();
  const month = startOfMonth(now).getTime();
  const spent = { today: 0, month: 0 };
  const batches = new Map<string, { at: number; cost: number }>();
  const path = ledgerPath(env);
  // Loaded only where a budget is set: a plain call reads no ledger.
  const { createReadStream, existsSync } = await import('node:fs');
  const { createInterface } = await import('node:readline');
  if (!existsSync(path)) return spent;
  const add = (at: number, cost: number) => {
    if (at >= month) spent.month += cost;
    if (at >= day) spent.today += cost;
  };
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    let r: UsageRecord;
    try {
      r = JSON.parse(line) as UsageRecord;
    } catch {
      continue;
    }
    if (!r || r.profile !== profile || typeof r.time !== 'string' || typeof r.cost !== 'number' || !Number.isFinite(r.cost)) continue;
    const at = Date.parse(r.time);
    if (!(at >= month)) continue;
    if (r.batch_id) batches.set(r.batch_id, { at, cost: r.cost });
    else add(at, r.cost);
  }
  for (const b of batches.values()) add(b.at, b.cost);
  return { today: round(spent.today), month: round(spent.month) };
}

/** The budgets the settings set, with what was spent against each. */
export async function budgetsFor(env: NodeJS.ProcessEnv, settings: Settings, now = new Date()): Promise<Budget[]> {
  const set: [BudgetName, string | undefined][] = [
    ['daily_budget', settings.dailyBudget],
    ['monthly_budget', settings.monthlyBudget],
  ];
  const given = set.filter((b): b is [BudgetName, string] => b[1] !== undefined);
  if (given.length === 0) return [];
  const spent = await spentBy(env, settings.profile, now);
  return given.map(([name, value]) => {
    const from = fromEnv(env, BUDGET_ENV[name]) !== undefined ? BUDGET_ENV[name] : `${name} of profile "${settings.profile}"`;
    const daily = name === 'daily_budget';
    const start = daily ? startOfDay(now) : startOfMonth(now);
    const resets = daily ? new Date(start.getTime() + 86_400_000) : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    return { name, from, limit: usdAmount(value, from), spent: daily ? spent.today : spent.month, resets };
  });
}

/** Sums of floats, to the precision the service reports. */
const round = (x: number) => Math.round(x * 1e10) / 1e10;
