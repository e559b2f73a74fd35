/**
 * --max-cost, --dry-run and the budgets, before a call is sent: the kit's spend guard
 * (`src/kit/spend/spend-guard.ts`) with the run's flags, settings and model list; its notes said on
 * stderr, its refusals typed errors that `cli/errors.ts` makes exit 4.
 */
import { damagedWords } from './ledger-words.js';
import type { FlagTable, FlagValues } from '../flags/flags.js';
import type { Connected } from '../context.js';
import type { RunContext } from '../run.js';
import { DEFAULT_API_ROOT } from '../../client/core.js';
import { usdAmount } from '../../kit/spend/budget.js';
import { BudgetHold } from './budget-hold.js';
import { usdBound, type Pricing } from '../../kit/spend/cost-bound.js';
import { HeldBack, SpendGuard, type Cap, type Checked, type SpendCall } from '../../kit/spend/spend-guard.js';
import { pricesFrom } from '../../kit/spend/prices.js';
import { usage } from '../exit-codes.js';
import { rootKey } from '../../internal/api-root.js';
import type { Held } from './budget-hold.js';
import { counted } from '../../internal/counted.js';

export { HeldBack, type Cap };
export { reachedLine } from '../../kit/spend/budget.js';

export const SPEND_FLAGS = {
  maxCost: { flags: '--max-cost <usd>', help: 'the most this call may cost, from the model list\'s prices: the max tokens are lowered to fit, or the call is refused (exit 4)', parse: (v: string) => usdAmount(v, '--max-cost') },
  dryRun: { flags: '--dry-run', help: 'print the request body and its cost bound; send nothing' },
  ignoreBudget: { flags: '--ignore-budget', help: 'do not hold this call to daily_budget / monthly_budget' },
} satisfies FlagTable;

/** The same flags for a call with no completion limit to lower (embed, speak, decide): over the cap it is refused. */
export const FIXED_SPEND_FLAGS = {
  ...SPEND_FLAGS,
  maxCost: { ...SPEND_FLAGS.maxCost, help: 'the most this call may cost, from the model list\'s prices: a call that could cost more is refused (exit 4)' },
} satisfies FlagTable;

export type SpendOptions = FlagValues<typeof SPEND_FLAGS>;

export interface GuardedCall extends SpendCall {
  /** Fields the client adds as it sends (a stream's `stream: true`): shown by --dry-run. */
  sentWith?: Record<string, unknown>;
}

export interface Guard extends Checked {
  /** --dry-run: the body and bound were printed; the caller sends nothing. */
  dryRun: boolean;
  /** The kit's guard: a further call of the command (a tool loop's next round) is held to what is left. */
  kit?: SpendGuard;
  /** The cap that last lowered the completion limit (--max-cost or a budget), for the note on an answer cut at it. */
  lowered?: { cap?: Cap };
}

/** The kit's guard with the run's flags and settings; its notes said on stderr. */
export function spendGuard(ctx: RunContext<SpendOptions>, { client, settings, keyHash }: Connected, seen?: { cap?: Cap }): SpendGuard {
  const { io, opts } = ctx;
  return new SpendGuard({
    prices: (ids, refresh) => pricesOf(ctx, client, settings.apiRoot ?? DEFAULT_API_ROOT, ids, refresh),
    env: ctx.env,
    maxCost: opts.maxCost,
    budgets: settings,
    ignoreBudget: !!opts.ignoreBudget,
    recorded: ctx.logging,
    estimate: !!opts.dryRun,
    signal: ctx.signal,
    newHold: (env, profile, usd, call, ignoreBudget) => new BudgetHold(env, profile, usd, { command: commandPath(ctx), api_root: rootKey(settings.apiRoot ?? DEFAULT_API_ROOT), ...(keyHash ? { key_hash: keyHash } : {}), ...call }, ignoreBudget),
    words: { maxCost: '--max-cost', ignoreBudget: '--ignore-budget', spender: 'this command' },
    on: {
      lowered: (tokens, cap) => {
        if (seen) seen.cap = cap;
        io.note(`note: max tokens lowered to ${tokens} to stay within ${cap.name}`);
      },
      waiting: (why) => io.info(`waiting for calls under way to end: ${why}`),
      hold: (hold) => ctx.holdBudget(hold as BudgetHold),
      reached: (line) => io.note(`note: ${line}; this call would be refused (exit 4) if it were sent`),
      unkept: (names) => {
        // Said once a command (a REPL asks many times).
        if (warnedNoLog.has(io)) return;
        warnedNoLog.add(io);
        io.note(`warning: with logging off this call is not in the usage ledger, so ${names.join(' and ')} cannot be kept`);
      },
      damaged: (lines, ledger, at) => {
        if (warnedDamaged.has(io)) return;
        warnedDamaged.add(io);
        io.note(`warning: ${damagedWords(lines, ledger, at ?? [])}: the budgets do not count what ${lines === 1 ? 'it' : 'they'} cost (router usage shows the ledger)`);
      },
    },
  });
}

/** Checks the call against --max-cost and the budgets; may lower its completion limit in `call.body`. */
export async function guardSpend(ctx: RunContext<SpendOptions>, connected: Connected, call: GuardedCall): Promise<Guard> {
  const lowered: { cap?: Cap } = {};
  const kit = spendGuard(ctx, connected, lowered);
  const checked = await kit.check(call);
  if (ctx.opts.dryRun) {
    const most = checked.completionMost;
    const limit = call.completes ? `, completion ≤ ${most === 'unbounded' || most === undefined ? `${most} tokens` : counted(Number(most), 'token')}` : '';
    const line = checked.unknown !== undefined ? `cost bound: unknown (${checked.unknown})` : checked.bound !== undefined ? `cost bound: ${usdBound(checked.bound)} (prompt ≤ ${counted(checked.size!.promptTokens, 'token')}${limit}, at the prices of ${checked.boundModel})` : undefined;
    if (line) dryRun(ctx, call, line);
  }
  return Object.assign(checked, { dryRun: !!ctx.opts.dryRun, kit, lowered });
}

/** What lowered a completion limit an answer was then cut at, and the way to more: --max-cost, or what was left of a budget. */
export function loweredBy(guard: Guard): string {
  const budget = /^what is left of (\w+)/.exec(guard.lowered?.cap?.name ?? '')?.[1];
  return budget ? `lowered to fit what is left of ${budget}; raise it or pass --ignore-budget for more` : 'lowered by --max-cost; raise --max-cost for more';
}

/**
 * A further call of the same command (the next round of a tool loop, whose prompt has grown): held
 * to what is left of the cap once `spent` (what the earlier calls cost) is taken off, as the first
 * call was held to the whole; the guard's bound becomes this call's (and its hold, under a budget).
 */
export async function guardNext(_ctx: RunContext<SpendOptions>, _connected: Connected, guard: Guard, call: GuardedCall, spent: number): Promise<void> {
  await guard.kit?.next(guard, call, spent);
}

/**
 * The lowest of --max-cost (less what the command already `spent`) and what is left of each budget
 * (unless --ignore-budget) beside what calls under way hold; a budget already reached is refused.
 */
export async function capOf(ctx: RunContext<SpendOptions>, settings: Connected['settings'], held?: Held, spent = 0): Promise<Cap | undefined> {
  return spendGuard(ctx, { settings } as Connected).cap(held, spent);
}

/** The command as the ledger names it ("batch run"). */
export function commandPath(ctx: RunContext<unknown>): string {
  const names: string[] = [];
  for (let c: RunContext<unknown>['cmd'] | null = ctx.cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Where the warning that logging off cannot keep a budget was given: it is said once a command (a REPL asks many times). */
const warnedNoLog = new WeakSet<object>();
const warnedDamaged = new WeakSet<object>();

/** How a refusal names the completion limit: the flag as typed, or the role that set it ("role short's --max-tokens"). */
export function limitFlagOf(ctx: RunContext<unknown>, attr: string, flag: string): string {
  const role = (ctx.opts as { role?: unknown }).role;
  return typeof role === 'string' && ctx.cmd.getOptionValueSource(attr) !== 'cli' ? `role ${role}'s ${flag}` : flag;
}

/** `(bound $x)` for the --usage line, when a cap made a bound (a plain call reads no prices). */
export function boundNote(guard: Guard | undefined): string {
  return guard?.bound !== undefined ? ` (bound ${usdBound(guard.bound)})` : '';
}

/**
 * The prices, or why there are none. A model list that cannot be read (the network, a refused key)
 * fails a capped call with that failure's own exit code; a --dry-run alone says the bound is unknown.
 */
export async function pricesOrWhy(ctx: RunContext<unknown>, cap: Cap | undefined, read: () => Promise<Pricing[] | string>): Promise<Pricing[] | string> {
  try {
    return await read();
  } catch (err) {
    if (cap || ctx.signal.aborted) throw err;
    return `the model list could not be read (${(err as Error).message})`;
  }
}

/** The prices of these models from the model list, or a sentence saying why they cannot be read; a failure to fetch the list is thrown. */
export async function pricesOf(ctx: RunContext<unknown>, client: Connected['client'], apiRoot: string, ids: (string | undefined)[], refresh = false): Promise<Pricing[] | string> {
  const wanted = [...new Set(ids.filter((id): id is string => !!id))];
  if (wanted.length === 0) return 'no model is named (the service would choose one)';
  const { modelCatalog } = await import('../service/model-catalog.js');
  const catalog = (fresh: boolean) => modelCatalog(client, { env: ctx.env, apiRoot, signal: ctx.signal, refresh: fresh });
  const got = await pricesFrom(catalog)(wanted, refresh);
  // A typo under a cap is what the service would refuse (400, exit 2, with a guess), not a refusal of money (exit 4).
  // A variant (":free") may be served unlisted: it stays unbounded. The kept list may be minutes old: it is read afresh first.
  const missing = typeof got === 'string' ? NOT_LISTED.exec(got)?.[1] : undefined;
  if (!missing || missing.includes(':')) return got;
  const models = await catalog(true);
  if (models.some((m) => m.id === missing)) return pricesFrom(() => Promise.resolve(models))(wanted, true);
  const near = (await import('../service/model-hint.js')).nearestModel(missing, models.map((m) => m.id));
  throw usage(`${missing} is not in the model list (${near ? `did you mean ${near}? ` : ''}the list: router models): nothing was sent`);
}

const NOT_LISTED = /^(\S+) is not in the model list$/;

/** --dry-run: the body on stdout, the bound on stderr; nothing is sent. */
function dryRun(ctx: RunContext<SpendOptions>, call: GuardedCall, line: string): void {
  const body = { ...call.body, ...call.sentWith };
  // --jq and --json FIELDS shape the body as they shape any JSON a command prints.
  if (ctx.io.jsonShape.jq || ctx.io.jsonShape.fields) ctx.io.json(body);
  else ctx.io.out(`${JSON.stringify(body, null, 2)}\n`);
  ctx.io.note(line);
}
