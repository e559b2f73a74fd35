/**
 * --max-cost, --dry-run and the budgets, before a call is sent: the call's cost bound from the
 * model list's prices, its completion limit lowered to fit the cap, or the call refused (exit 4).
 */
import type { FlagTable, FlagValues } from '../flags/flags.js';
import type { Connected } from '../context.js';
import type { RunContext } from '../run.js';
import { CliError, EXIT } from '../exit-codes.js';
import { DEFAULT_API_ROOT } from '../../client/core.js';
import { budgetsFor, usdAmount, type Budget } from './budget.js';
import { BudgetHold, heldByOthers, holdNames, holdsChange, withBudgetLock, type Held } from './budget-hold.js';
import { completionWithin, countImages, imagesUnbounded, promptTokenBound, readPricing, searchesOf, usd, usdBound, worstBound, type CallSize, type Pricing } from './cost-bound.js';

export const SPEND_FLAGS = {
  maxCost: { flags: '--max-cost <usd>', help: 'the most this call may cost, from the model list\'s prices: the max tokens are lowered to fit, or the call is refused (exit 4)', parse: (v: string) => usdAmount(v, '--max-cost') },
  dryRun: { flags: '--dry-run', help: 'print the request body and its cost bound; send nothing' },
  ignoreBudget: { flags: '--ignore-budget', help: 'do not hold this call to daily_budget / monthly_budget' },
} satisfies FlagTable;

export type SpendOptions = FlagValues<typeof SPEND_FLAGS>;

export interface GuardedCall {
  body: Record<string, unknown>;
  /** The models that may serve it (fallbacks included). */
  models: (string | undefined)[];
  /** The body's field that limits the completion; absent: the call's completion cannot be limited. */
  limitField?: string;
  /** The flag that sets it, for messages; when it was given the limit is never lowered. */
  limitFlag?: string;
  explicitLimit?: boolean;
  /** Whether the call is billed for completion tokens at all (embeddings and speech are not). */
  completes: boolean;
  /** Why no bound can be made before the call runs (a server-tool loop), if none can. */
  unboundable?: string;
  /** Fields the client adds as it sends (a stream's `stream: true`): shown by --dry-run. */
  sentWith?: Record<string, unknown>;
  /** Requests the call is sent as (embeddings split into several). */
  requests?: number;
}

export interface Guard {
  bound?: number;
  /** --dry-run: the body and bound were printed; the caller sends nothing. */
  dryRun: boolean;
  /** The cap the call was held to, and the prices that bound it: a further call of the command (a tool loop's next round) is held to what is left. */
  cap?: Cap;
  prices?: Pricing[];
  /** What the call holds of the budgets while it runs (released when its cost is in the ledger). */
  hold?: BudgetHold;
}

export interface Cap {
  usd: number;
  /** How a refusal names it: "--max-cost $0.010000" or "what is left of daily_budget ($1.450000, ROUTER_DAILY_BUDGET)". */
  name: string;
  /** What calls under way hold of the budget beside it: a call that does not fit waits for them. */
  held?: number;
}

/** A bound at the kept prices this near the cap (a share of it) is checked again at fresh prices. */
const NEAR_LINE = 0.5;

/** Checks the call against --max-cost and the budgets; may lower its completion limit in `call.body`. */
export async function guardSpend(ctx: RunContext<SpendOptions>, connected: Connected, call: GuardedCall): Promise<Guard> {
  if (!holdsBudgets(ctx, connected.settings)) return guardOnce(ctx, connected, call);
  return heldGuard(ctx, connected, (held) => guardOnce(ctx, connected, call, held));
}

async function guardOnce(ctx: RunContext<SpendOptions>, { client, settings }: Connected, call: GuardedCall, held?: Held): Promise<Guard> {
  const { opts } = ctx;
  const cap = await capOf(ctx, settings, held);
  if (!cap && !opts.dryRun) return { dryRun: false };
  const root = settings.apiRoot ?? DEFAULT_API_ROOT;
  let read = call.unboundable ?? (await pricesOrWhy(ctx, cap, () => pricesOf(ctx, client, root, call.models)));
  // The kept model list may be minutes old: a decision near the line is made on prices read afresh.
  if (cap && typeof read !== 'string' && worstBound(read, sizeOf(call)).bound >= cap.usd * NEAR_LINE) read = await pricesOrWhy(ctx, cap, () => pricesOf(ctx, client, root, call.models, true));
  const prices = typeof read === 'string' ? read : (imagesUnbounded(call.body, read) ?? read);
  if (typeof prices === 'string') {
    if (cap) throw new CliError(`cannot bound the cost of this call for ${cap.name}: ${prices}`, EXIT.PAYMENT);
    if (opts.dryRun) dryRun(ctx, call, `cost bound: unknown (${prices})`);
    return { dryRun: !!opts.dryRun };
  }
  if (cap) fitCap(ctx, call, prices, sizeOf(call), cap);
  const size = sizeOf(call);
  const { bound, model } = worstBound(prices, size);
  if (opts.dryRun) {
    const limit = call.completes ? `, completion ≤ ${describeLimit(prices, size)} tokens` : '';
    dryRun(ctx, call, `cost bound: ${usdBound(bound)} (prompt ≤ ${size.promptTokens} tokens${limit}, at the prices of ${model})`);
  }
  return { bound, dryRun: !!opts.dryRun, ...(cap ? { cap, prices } : {}) };
}

/**
 * A further call of the same command (the next round of a tool loop, whose prompt has grown): held
 * to what is left of the cap once `spent` (what the earlier calls cost) is taken off, as the first
 * call was held to the whole; the guard's bound becomes this call's (and its hold, under a budget).
 */
export async function guardNext(ctx: RunContext<SpendOptions>, connected: Connected, guard: Guard, call: GuardedCall, spent: number): Promise<void> {
  const { cap, prices } = guard;
  if (!cap || !prices) return;
  const next = async (held?: Held) => {
    // Under a budget the ledger has the earlier calls by now: the budgets are read again, beside the holds of other calls.
    const left = held ? (await capOf(ctx, connected.settings, held, spent))! : { usd: cap.usd - spent, name: `${cap.name}, less the ${usd(spent)} this command already spent` };
    fitCap(ctx, call, prices, sizeOf(call), left);
    guard.bound = worstBound(prices, sizeOf(call)).bound;
    return guard;
  };
  await (guard.hold ? heldGuard(ctx, connected, next, guard.hold) : next());
}

/** Whether this call holds what it may cost against the budgets while it runs (./budget-hold.ts). */
function holdsBudgets(ctx: RunContext<SpendOptions>, settings: Connected['settings']): boolean {
  const budgeted = settings.dailyBudget !== undefined || settings.monthlyBudget !== undefined;
  // With logging off the ledger never has the call: the budgets cannot be kept (capOf says so), nor held.
  return budgeted && !ctx.opts.dryRun && !ctx.opts.ignoreBudget && ctx.logging;
}

/**
 * Checks a call against the budgets under their lock, beside what calls under way (in any
 * process) hold, and holds its bound until its cost is in the ledger. One that would fit once
 * those calls end waits for them (said on a terminal); one that would not is refused.
 */
async function heldGuard(ctx: RunContext<SpendOptions>, connected: Connected, attempt: (held: Held) => Promise<Guard>, hold?: BudgetHold): Promise<Guard> {
  const { env, signal, io } = ctx;
  const { profile } = connected.settings;
  for (let said = false; ; said = true) {
    // The holds as this check sees them: one released after it (even before the wait begins) ends the wait.
    let seen = '';
    const out = await withBudgetLock(env, signal, async () => {
      const held = heldByOthers(env, profile, hold);
      seen = holdNames(env);
      try {
        const guard = await attempt(held);
        if (guard.bound === undefined) return guard;
        if (hold) hold.set(guard.bound);
        else ctx.holdBudget((guard.hold = new BudgetHold(env, profile, guard.bound)));
        return guard;
      } catch (err) {
        if (err instanceof HeldBack) return err;
        throw err;
      }
    });
    if (!(out instanceof HeldBack)) return out;
    // A call that waits holds nothing (its earlier calls are in the ledger): two tool loops never wait for each other.
    hold?.set(0);
    if (!said) io.info(`waiting for calls under way to end: ${out.message}`);
    await holdsChange(env, signal, seen);
  }
}

/** A call that fits the budgets only once calls under way end (and their holds with them). */
export class HeldBack extends Error {}

/**
 * The lowest of --max-cost (less what the command already `spent`) and what is left of each budget
 * (unless --ignore-budget) beside what calls under way hold; a budget already reached refuses the
 * call (exit 4), and one that logging off cannot keep is said once.
 */
export async function capOf(ctx: RunContext<SpendOptions>, settings: Connected['settings'], held?: Held, spent = 0): Promise<Cap | undefined> {
  const { io, opts } = ctx;
  const caps: Cap[] = [];
  if (opts.maxCost !== undefined) caps.push({ usd: opts.maxCost - spent, name: `--max-cost ${usd(opts.maxCost)}${spent ? `, less the ${usd(spent)} this command already spent` : ''}` });
  if (!opts.ignoreBudget) {
    const budgets = await budgetsFor(ctx.env, settings, { signal: ctx.signal });
    if (budgets.length && !ctx.logging && !warnedNoLog.has(io)) {
      warnedNoLog.add(io);
      io.note(`warning: with logging off this call is not in the usage ledger, so ${budgets.map((b) => b.name).join(' and ')} cannot be kept`);
    }
    for (const b of budgets) {
      if (b.spent >= b.limit) throw new CliError(reachedLine(b), EXIT.PAYMENT);
      const left = b.limit - b.spent;
      if (!held?.calls) {
        caps.push({ usd: left, name: `what is left of ${b.name} (${usd(left)}, ${b.from})` });
        continue;
      }
      const beside = `${b.name} (${usd(left)} left, ${b.from}) beside the ${usd(held.usd)} ${held.calls === 1 ? 'a call under way holds' : `${held.calls} calls under way hold`}`;
      if (left <= held.usd) throw new HeldBack(`nothing is left of ${beside}`);
      caps.push({ usd: left - held.usd, name: `what is left of ${beside}`, held: held.usd });
    }
  }
  return caps.reduce<Cap | undefined>((low, c) => (!low || c.usd < low.usd ? c : low), undefined);
}

/** Where the warning that logging off cannot keep a budget was given: it is said once a command (a REPL asks many times). */
const warnedNoLog = new WeakSet<object>();

/** The line of a budget that is used up. */
export function reachedLine(b: Budget): string {
  const period = b.name === 'daily_budget' ? 'today' : 'this month';
  return `${b.name} of ${usd(b.limit)} reached (${b.from}): ${usd(b.spent)} spent ${period} (UTC); it resets at ${b.resets.toISOString()} (--ignore-budget for one call)`;
}

/** How a refusal names the completion limit: the flag as typed, or the role that set it ("role short's --max-tokens"). */
export function limitFlagOf(ctx: RunContext<unknown>, attr: string, flag: string): string {
  const role = (ctx.opts as { role?: unknown }).role;
  return typeof role === 'string' && ctx.cmd.getOptionValueSource(attr) !== 'cli' ? `role ${role}'s ${flag}` : flag;
}

/** `(bound $x)` for the --usage line, when a cap made a bound (a plain call reads no prices). */
export function boundNote(guard: Guard | undefined): string {
  return guard?.bound !== undefined ? ` (bound ${usdBound(guard.bound)})` : '';
}

function sizeOf(call: GuardedCall): CallSize {
  const limit = call.limitField ? call.body[call.limitField] : undefined;
  const requests = call.requests ?? 1;
  return {
    promptTokens: promptTokenBound(call.body),
    images: countImages(call.body),
    completionTokens: !call.completes ? 0 : typeof limit === 'number' ? limit * requests : undefined,
    requests,
    searches: searchesOf(call.body) * requests,
  };
}

function describeLimit(prices: Pricing[], size: CallSize): string {
  const most = Math.max(...prices.map((p) => Math.min(size.completionTokens ?? Infinity, p.maxCompletion ?? Infinity)));
  return Number.isFinite(most) ? String(most) : 'unbounded';
}

/** Lowers the completion limit to what the cap allows, or refuses the call (it waits where calls under way hold what it needs). */
function fitCap(ctx: RunContext<SpendOptions>, call: GuardedCall, prices: Pricing[], size: CallSize, cap: Cap): void {
  const fit = fitting(call, prices, size, cap);
  if (typeof fit === 'string') {
    const free = cap.held ? fitting(call, prices, size, { ...cap, usd: cap.usd + cap.held }) : fit;
    throw typeof free === 'string' ? new CliError(fit, EXIT.PAYMENT) : new HeldBack(fit);
  }
  if (fit === undefined) return;
  call.body[call.limitField!] = fit;
  ctx.io.note(`note: max tokens lowered to ${fit} to stay within ${cap.name}`);
}

/** The completion limit the call must be lowered to (undefined: it fits as it is), or why it cannot fit. */
function fitting(call: GuardedCall, prices: Pricing[], size: CallSize, cap: Cap): number | string | undefined {
  const { bound } = worstBound(prices, size);
  if (bound <= cap.usd) return undefined;
  // Never past a model's own maximum either: a fallback model might refuse a larger limit.
  const modelMost = Math.min(...prices.map((p) => p.maxCompletion ?? Infinity));
  const over = `this call could cost up to ${usdBound(bound)}, over ${cap.name}`;
  if (!call.completes || !call.limitField) return over;
  // The prompt as it would be sent: with the limit written in, whose digits are prompt bytes too.
  const limited = withLimitWritten(call, call.limitField);
  const fits = Math.min(modelMost, completionWithin(prices, limited, cap.usd));
  if (fits < 1) return `${over}: not even one completion token fits (the prompt alone may cost ${usdBound(worstBound(prices, { ...limited, completionTokens: 0 }).bound)})`;
  if (call.explicitLimit) return `${over}: ${call.limitFlag} ${String(call.body[call.limitField])} does not fit; ${fits} or fewer would`;
  return fits;
}

/** The call's size once a limit is written into its body: sized with the longest number a limit can be. */
function withLimitWritten(call: GuardedCall, field: string): CallSize {
  const had = call.body[field];
  call.body[field] = Number.MAX_SAFE_INTEGER;
  const size = sizeOf(call);
  if (had === undefined) delete call.body[field];
  else call.body[field] = had;
  return size;
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
  const list = await modelCatalog(client, { env: ctx.env, apiRoot, signal: ctx.signal, refresh });
  const prices: Pricing[] = [];
  for (const id of wanted) {
    const model = list.find((m) => m.id === id);
    if (!model) return `${id} is not in the model list`;
    const p = readPricing(model);
    if (typeof p === 'string') return p;
    prices.push(p);
  }
  return prices;
}

/** --dry-run: the body on stdout, the bound on stderr; nothing is sent. */
function dryRun(ctx: RunContext<SpendOptions>, call: GuardedCall, line: string): void {
  const body = { ...call.body, ...call.sentWith };
  // --jq and --json FIELDS shape the body as they shape any JSON a command prints.
  if (ctx.io.jsonShape.jq || ctx.io.jsonShape.fields) ctx.io.json(body);
  else ctx.io.out(`${JSON.stringify(body, null, 2)}\n`);
  ctx.io.note(line);
}
