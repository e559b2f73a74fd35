/** `router usage`: totals of the local usage ledger, by day, model or command. */
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from '../commander.js';
import { Option } from '../commander.js';
import { usage } from '../exit-codes.js';
import { action, type RunContext } from '../run.js';
import { ledgerPath, type UsageRecord } from '../ledger.js';

interface UsageOpts {
  since: string;
  by: 'day' | 'model' | 'command' | 'profile';
  json?: boolean;
}

interface Totals {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
}

export function registerUsage(program: Command): void {
  program
    .command('usage')
    .description('Totals of what this machine\'s router calls used and cost, from the local usage ledger (rows: tab-separated; --json for one object).')
    .option('--since <when>', 'from this long ago (30m, 12h, 7d) or this date (2026-11-01)', '30d')
    .addOption(new Option('--by <key>', 'one row per').choices(['day', 'model', 'command', 'profile']).default('day'))
    .option('--json', 'print {since, until, by, rows, total}')
    .addHelpText(
      'after',
      `
Every call (chat, responses, embed, speak, decide, and each batch once it ends) is one JSON line in
$XDG_STATE_HOME/router/usage.jsonl: time, profile, command, endpoint, model, id or batch_id,
tokens and the cost the service reported. --no-log (or ROUTER_NO_LOG=1, or
router config set log off) leaves a call out. A batch counts once, with its latest record.

Examples:
  $ router usage
  $ router usage --since 7d --by model
  $ router usage --json --jq '.total.cost'
  $ router usage --json --jq '.budgets'

With daily_budget or monthly_budget set (router config set daily_budget 2, or ROUTER_DAILY_BUDGET),
a terminal also shows today's and this month's spend of the profile against them (--json: budgets).`,
    )
    .action(action<UsageOpts>(runUsage));
}

/** `7d`, `12h`, `30m`, or a date, as Unix milliseconds. */
export function sinceMs(text: string, now = Date.now()): number {
  const rel = /^(\d+(?:\.\d+)?)([mhdw])$/.exec(text);
  if (rel) return now - Number(rel[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[rel[2] as 'm' | 'h' | 'd' | 'w'];
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw usage(`--since "${text}": give a span (30m, 12h, 7d, 2w) or a date (2026-11-01)`);
  return at;
}

const zero = (): Totals => ({ calls: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 });

function add(t: Totals, r: UsageRecord): void {
  t.calls++;
  t.prompt_tokens += r.prompt_tokens ?? 0;
  t.completion_tokens += r.completion_tokens ?? 0;
  t.total_tokens += r.total_tokens ?? 0;
  t.cost += r.cost ?? 0;
}

async function runUsage(ctx: RunContext<UsageOpts>): Promise<void> {
  const { io, opts } = ctx;
  const from = sinceMs(opts.since);
  const path = ledgerPath(ctx.env);
  const records: UsageRecord[] = [];
  const batches = new Map<string, number>();
  if (existsSync(path)) {
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
      let r: UsageRecord;
      try {
        r = JSON.parse(line) as UsageRecord;
      } catch {
        continue;
      }
      if (!r || typeof r.time !== 'string' || Date.parse(r.time) < from) continue;
      // A batch is recorded each time it is seen ended: the latest record stands.
      if (r.batch_id) {
        const at = batches.get(r.batch_id);
        if (at !== undefined) records[at] = r;
        else {
          batches.set(r.batch_id, records.length);
          records.push(r);
        }
      } else records.push(r);
    }
  }
  const groups = new Map<string, Totals>();
  const total = zero();
  for (const r of records) {
    const key = opts.by === 'day' ? r.time.slice(0, 10) : String(r[opts.by] ?? '-');
    if (!groups.has(key)) groups.set(key, zero());
    add(groups.get(key)!, r);
    add(total, r);
  }
  const budgets = await budgetRows(ctx);
  const rows = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, t]) => ({ key, ...t, cost: round(t.cost) }));
  if (opts.json) return io.json({ since: new Date(from).toISOString(), until: new Date().toISOString(), by: opts.by, rows, total: { ...total, cost: round(total.cost) }, budgets });
  const lines = [...rows, { key: 'total', ...total }].map((r) => [r.key, String(r.calls), String(r.prompt_tokens), String(r.completion_tokens), String(r.total_tokens), `$${r.cost.toFixed(6)}`]);
  if (!io.stdoutTTY) return void io.out(`${lines.map((r) => r.join('\t')).join('\n')}\n`);
  const { table } = await import('../table.js');
  io.out(table(io, [opts.by, 'calls', 'prompt', 'completion', 'total tokens', 'cost'], lines));
  for (const b of budgets) io.out(`${b.name}: $${b.spent.toFixed(6)} of $${b.limit.toFixed(6)} spent ${b.name === 'daily_budget' ? 'today' : 'this month'} (UTC), $${b.left.toFixed(6)} left; resets ${b.resets}\n`);
}

/** Today's and this month's spend of the profile against its budgets (none when it sets none). */
async function budgetRows(ctx: RunContext<UsageOpts>) {
  const { resolveSettings } = await import('../../config/settings.js');
  const { budgetsFor } = await import('../budget.js');
  const settings = await resolveSettings({ profile: ctx.flags.profile, apiRoot: ctx.flags.apiRoot }, ctx.env);
  const budgets = await budgetsFor(ctx.env, settings);
  return budgets.map((b) => ({ name: b.name, profile: settings.profile, limit: b.limit, spent: b.spent, left: round(Math.max(0, b.limit - b.spent)), resets: b.resets.toISOString() }));
}

/** Sums of floats, to the precision the service reports (no 0.30000000000000004). */
const round = (x: number) => Math.round(x * 1e10) / 1e10;
