/** `router usage`: totals of the local usage ledger, by day, model or command. */
import { usage } from '../exit-codes.js';
import type { RunContext } from '../run.js';
import { defineCommand } from '../define.js';
import type { FlagValues } from '../flags/flags.js';
import { ledgerPath, type UsageRecord } from '../../kit/spend/ledger.js';
import { eachLedgerRecord } from '../../kit/spend/ledger-read.js';
import { NegativeCosts } from '../../kit/spend/negative-costs.js';
import { damagedWords } from '../spend/ledger-words.js';
import { integerIn } from '../flags/options.js';
import { costText, roundCost } from '../../internal/round-cost.js';
import type { Totals } from './usage-activity.js';
import { counted } from '../../internal/counted.js';
import { tabLine } from '../io/described.js';
import { shownName } from '../../config/fields.js';

/** Calls counted at their bound (a ledger line's `unsettled`: a cut, a kill) that no --reconcile line has settled yet. */
interface Unsettled {
  calls: number;
  cost: number;
}

/** How many of them each profile has: `usage --reconcile` settles the lines of its run's profile alone. */
type UnsettledByProfile = Map<string, number>;

const FLAGS = {
  since: { flags: '--since <when>', help: 'from this long ago (30m, 12h, 7d) or this date (2026-11-01)', default: '30d' },
  by: { flags: '--by <key>', help: 'one row per', choices: ['day', 'model', 'command', 'profile'], default: 'day' },
  json: { flags: '--json', help: 'print {since, until, by, rows, total, budgets, unsettled}; with --reconcile, what it checked' },
  reconcile: { flags: '--reconcile', help: 'put the cost the service really charged (GET /v1/generation) into the ledger, for calls made at this API root it has not checked yet' },
  activity: { flags: '--activity', help: "what the service recorded instead (GET /v1/activity, a management key): its last 30 completed UTC days (today's calls show tomorrow); --by day or model" },
  key: { flags: '--key <hash>', help: 'with --activity: only the calls of this API key (its hash, as router keys list prints it)', goesWith: ['activity'], complete: 'key-hashes' },
  limit: { flags: '--limit <n>', help: 'with --reconcile: check at most this many calls this run (the next run goes on)', parse: integerIn(1, 10_000), default: 50, goesWith: ['reconcile'] },
} as const;

export const usageCommand = defineCommand({
  name: 'usage',
  jsonFields: ['since', 'until', 'by', 'rows', 'total', 'budgets', 'checked', 'reconciled', 'not_found', 'unknown_here', 'pending', 'waiting', 'left', 'stopped', 'reported_cost', 'charged_cost'],
  summary: 'totals of tokens and cost from the local ledger',
  description: "Totals of what this machine's router calls used and cost, from the local usage ledger (rows: tab-separated; --json for one object).",
  flags: FLAGS,
  notes: `Piped, one tab-separated line per row, then one for the total: the --by key (day, model, …), calls, prompt tokens, completion tokens, total tokens, cost (USD).

Every call (chat, responses, embed, speak, decide, and each batch once it ends) is one JSON line in $XDG_STATE_HOME/router/usage.jsonl: time, profile, command, endpoint, model, id or batch_id, tokens and the cost the service reported. --no-log (or ROUTER_NO_LOG=1, or router config set log off) leaves a call out. A batch counts once, on the day it was first seen ended, at its latest figures. A call whose cost was not known when it ended (a stream cut, a process killed) under a budget is counted at its bound until --reconcile settles it (the run's profile's alone): stderr says how many, and the --profile of those another profile made (--json: unsettled {calls, cost}).

With daily_budget or monthly_budget set (router config set daily_budget 2, or ROUTER_DAILY_BUDGET), a terminal also shows today's and this month's spend of the profile against them, as the budgets' checks count it: with what batches not yet seen ended and calls the ledger could not take hold, said apart (--json: budgets, each with spent and its unrecorded part).

--reconcile asks the service what each call of the profile really cost (by the generation id the ledger keeps; oldest first, at most --limit a run) and adds a line per call to the ledger, so that totals and budgets count the charged cost. Only calls made at this API root are asked (the ledger keeps each call's): the others are counted, with the --api-root that reconciles them. A later run goes on where one stopped; a call the service still does not know an hour after it ran is marked and not asked about again.

--activity sums what the service recorded of the whole workspace instead (GET /v1/activity, a management key; every machine's calls, by UTC day, over its last 30 completed days: today's calls show tomorrow), in the same rows and columns; --key HASH keeps one API key's calls.`,
  examples: ['router usage', 'router usage --since 7d --by model', "router usage --json --jq '.total.cost'", "router usage --json --jq '.budgets'", 'router usage --reconcile --limit 20', "router usage --reconcile --json --jq '.charged_cost'", 'router usage --activity --by model'],
  run: runUsage,
});

/** `7d`, `12h`, `30m`, or a date, as Unix milliseconds. */
export function sinceMs(text: string, now = Date.now()): number {
  const rel = /^(\d+(?:\.\d+)?)([mhdw])$/.exec(text);
  if (rel) return now - Number(rel[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as 'm' | 'h' | 'd' | 'w'];
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw usage(`--since "${text}": give a span (30m, 12h, 7d, 2w) or a date (2026-11-01)`);
  // A date to come holds no calls: a typo of the year, most likely, and a total of 0 would hide it.
  // A bare date is read as UTC midnight, which is up to 14 hours ahead where today began east of UTC.
  if (at > now + (/^\d{4}-\d{2}-\d{2}$/.test(text) ? 14 * 3_600_000 : 0)) throw usage(`--since ${text} is in the future: give a date that has passed, or a span (30m, 12h, 7d, 2w)`);
  return at;
}

const zero = (): Totals => ({ calls: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 });

/** A count or cost of a record; anything but a finite number (a hand-edited "0.5") counts as none. */
const amount = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function add(t: Totals, r: UsageRecord): void {
  // A reconciling line (--reconcile) corrects the cost of a call counted already: no call, no tokens of its own.
  if ((r as { reconciles?: unknown }).reconciles !== undefined) return void (t.cost += amount(r.cost));
  t.calls++;
  t.prompt_tokens += amount(r.prompt_tokens);
  t.completion_tokens += amount(r.completion_tokens);
  t.total_tokens += amount(r.total_tokens);
  t.cost += amount(r.cost);
}

/** The ledger's records since `from`, summed per group as they are read: no record is held but a batch's latest. */
async function totalsSince(env: NodeJS.ProcessEnv, from: number, keyOf: (r: UsageRecord) => string, alsoTo: ((r: UsageRecord, line: number) => void) | undefined, signal: AbortSignal): Promise<{ groups: Map<string, Totals>; total: Totals; unsettled: Unsettled; byProfile: UnsettledByProfile; damaged: number; damagedLines: number[] }> {
  const groups = new Map<string, Totals>();
  const total = zero();
  // Bounds counted, by the call's id (a call with none, lost before its answer, can never be settled).
  const bounds = new Map<string, { cost: number; profile: string }>();
  let unreconcilable: Unsettled = { calls: 0, cost: 0 };
  const count = (r: UsageRecord) => {
    if (r.unsettled !== undefined) {
      if (r.id) bounds.set(r.id, { cost: amount(r.cost), profile: r.profile });
      else unreconcilable = { calls: unreconcilable.calls + 1, cost: unreconcilable.cost + amount(r.cost) };
    }
    const key = keyOf(r);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = zero()));
    add(group, r);
    add(total, r);
  };
  // A batch is recorded each time it is seen ended: it counts once, at the time it was first seen so
  // (a later `batch get` does not move its spend), with its latest figures, at the end of the read.
  const batches = new Map<string, UsageRecord>();
  const negatives = new NegativeCosts();
  const damagedLines: number[] = [];
  let refused = 0;
  const damaged = await eachLedgerRecord(env, (r, line) => {
    alsoTo?.(r, line);
    // A negative cost no reconcile wrote (a hand-edited line) is not counted here either, as the budgets count none.
    if (typeof r.cost === 'number' && !negatives.take(r)) {
      refused++;
      return void damagedLines.push(line);
    }
    const settles = (r as { reconciles?: unknown }).reconciles;
    if (typeof settles === 'string') bounds.delete(settles);
    const first = r.batch_id ? batches.get(r.batch_id) : undefined;
    if (r.batch_id) return void batches.set(r.batch_id, first ? { ...r, time: first.time } : r);
    if (Date.parse(r.time) >= from) count(r); // a time that is no date is no record
  }, signal, (line) => damagedLines.push(line));
  for (const r of batches.values()) if (Date.parse(r.time) >= from) count(r);
  const unsettled = { calls: unreconcilable.calls + bounds.size, cost: roundCost(unreconcilable.cost + [...bounds.values()].reduce((a, b) => a + b.cost, 0)) };
  const byProfile: UnsettledByProfile = new Map();
  for (const { profile } of bounds.values()) byProfile.set(profile, (byProfile.get(profile) ?? 0) + 1);
  return { groups, total, unsettled, byProfile, damaged: damaged + refused, damagedLines: damagedLines.sort((a, b) => a - b) };
}

async function runUsage(ctx: RunContext<FlagValues<typeof FLAGS>>): Promise<void> {
  const { opts } = ctx;
  if (opts.activity && opts.reconcile) throw usage('--activity and --reconcile cannot be combined');
  if (opts.reconcile) return (await import('./usage-reconcile.js')).runReconcile(ctx, opts.limit);
  const from = sinceMs(opts.since);
  if (opts.activity) {
    const { groups, total } = await (await import('./usage-activity.js')).activityTotals(ctx, from, opts.by, opts.key);
    return printTotals(ctx, { from, now: new Date(), groups, total, budgets: [] });
  }
  // A record without the field (a call whose model was not known) is in a group of its own: "-" on a terminal, empty piped, null in JSON.
  const keyOf = (r: UsageRecord) => (opts.by === 'day' ? r.time.slice(0, 10) : String(r[opts.by] ?? ''));
  // The budgets' spend is summed in the same read of the ledger.
  const { budgetsFor, spendCounter } = await import('../../kit/spend/budget.js');
  const settings = await ctx.settings();
  const now = new Date();
  const spend = settings.dailyBudget !== undefined || settings.monthlyBudget !== undefined ? spendCounter(settings.profile, now) : undefined;
  const { groups, total, unsettled, byProfile, damaged, damagedLines } = await totalsSince(ctx.env, from, keyOf, spend?.add, ctx.signal);
  // A line no record can be read from may have held a cost: said, never dropped unseen.
  if (damaged) ctx.io.note(`warning: ${damagedWords(damaged, ledgerPath(ctx.env), damagedLines)} and skipped: what ${damaged === 1 ? 'it' : 'they'} cost is not counted here, nor by the budgets`);
  // Spent as the budgets' checks count it: the ledger's, and what holds keep past their processes (`unrecorded`: not in the ledger).
  const budgets = (await budgetsFor(ctx.env, settings, { now, known: spend?.total() })).map((b) => ({ name: b.name, profile: settings.profile, limit: b.limit, spent: b.spent, unrecorded: b.kept, left: roundCost(Math.max(0, b.limit - b.spent)), resets: b.resets.toISOString() }));
  if (unsettled.calls) ctx.io.note(`note: ${counted(unsettled.calls, 'call')} counted at ${unsettled.calls === 1 ? 'its' : 'their'} bound ($${costText(unsettled.cost)} of the cost), not known when ${unsettled.calls === 1 ? 'it' : 'they'} ended (cut or killed): ${reconcileWords(unsettled.calls, byProfile, settings.profile)} the charge beside those the service knows`);
  return printTotals(ctx, { from, now, groups, total, budgets, unsettled });
}

/** The runs of `usage --reconcile` that settle them: this profile's, then each other profile's, which this run's would not touch. */
function reconcileWords(calls: number, byProfile: UnsettledByProfile, current: string): string {
  const run = (n: number, profile?: string) => `router usage --reconcile${profile === undefined ? '' : ` --profile ${shellWord(profile)}`}${n > FLAGS.limit.default ? ` --limit ${Math.min(n, 10_000)} (${FLAGS.limit.default} a run without it)` : ''}`;
  const others = [...byProfile].filter(([p]) => p !== current).sort(([a], [b]) => a.localeCompare(b));
  if (!others.length) return `${run(calls)} puts`;
  const mine = calls - others.reduce((a, [, n]) => a + n, 0);
  const runs: [string, number][] = [...(mine ? [[current, mine] as [string, number]] : []), ...others];
  if (runs.length === 1) return `${run(calls, runs[0]![0])} puts`;
  return `${runs.map(([p, n]) => `${run(n, p === current ? undefined : p)} (${counted(n, 'call')} of profile "${shownName(p)}")`).join(', ')} put`;
}

/** A profile's name as a shell reads it back: as it is, else in quotes. */
function shellWord(name: string): string {
  return /^[\w.@%+=:,-]+$/.test(name) ? name : `'${shownName(name).replace(/'/g, `'\\''`)}'`;
}

interface Budget {
  name: string;
  limit: number;
  spent: number;
  unrecorded: number;
  left: number;
  resets: string;
}

/** The totals, the ledger's or the service's (--activity): a table, tab-separated lines, or --json. */
async function printTotals(ctx: RunContext<FlagValues<typeof FLAGS>>, { from, now, groups, total, budgets, unsettled }: { from: number; now: Date; groups: Map<string, Totals>; total: Totals; budgets: Budget[]; unsettled?: Unsettled }): Promise<void> {
  const { io, opts } = ctx;
  const rows = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, t]) => ({ key, ...t, cost: roundCost(t.cost) }));
  const summed = { ...total, cost: roundCost(total.cost) };
  if (opts.json) return io.json({ since: new Date(from).toISOString(), until: now.toISOString(), by: opts.by, rows: rows.map((r) => ({ ...r, key: r.key || null })), total: summed, budgets, ...(unsettled ? { unsettled } : {}) });
  const lines = [...rows, { key: 'total', ...summed }].map((r) => [r.key || (io.stdoutTTY ? '-' : ''), String(r.calls), String(r.prompt_tokens), String(r.completion_tokens), String(r.total_tokens), `${io.stdoutTTY ? '$' : ''}${costText(r.cost)}`]);
  if (!io.stdoutTTY) return void io.out(lines.map((r) => tabLine(r)).join(''));
  const { table } = await import('../io/table.js');
  io.out(table(io, [opts.by, 'calls', 'prompt', 'completion', 'total tokens', 'cost'], lines));
  const keptPart = budgets.length ? (await import('../../kit/spend/budget.js')).keptPart : undefined;
  for (const b of budgets) io.out(`${b.name}: $${costText(b.spent)} of $${costText(b.limit)} spent ${b.name === 'daily_budget' ? 'today' : 'this month'} (UTC)${keptPart!({ kept: b.unrecorded })}, $${costText(b.left)} left; resets ${b.resets}\n`);
}
