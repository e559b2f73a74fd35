/**
 * --max-cost, --dry-run and the budgets, before a call is sent: the call's cost bound from the
 * model list's prices, its completion limit lowered to fit the cap, or the call refused (exit 4).
 */
import type { FlagTable, FlagValues } from './flags.js';
import type { Connected } from './context.js';
import type { RunContext } from './run.js';
import { CliError, EXIT } from './exit-codes.js';
import { DEFAULT_API_ROOT } from '../client/core.js';
import { budgetsFor, usdAmount, type Budget } from './budget.js';
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
}

export interface Cap {
  usd: number;
  /** How a refusal names it: "--max-cost $0.010000" or "what is left of daily_budget ($1.450000)". */
  name: string;
}

/** Checks the call against --max-cost and the budgets; may lower its completion limit in `call.body`. */
export async function guardSpend(ctx: RunContext<SpendOptions>, { client, settings }: Connected, call: GuardedCall): Promise<Guard> {
  const { opts } = ctx;
  const cap = await capOf(ctx, settings);
  if (!cap && !opts.dryRun) return { dryRun: false };
  const read = call.unboundable ?? (await pricesOrWhy(ctx, cap, () => pricesOf(ctx, client, settings.apiRoot ?? DEFAULT_API_ROOT, call.models)));
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
 * call was held to the whole; the guard's bound becomes this call's.
 */
export function guardNext(ctx: RunContext<SpendOptions>, guard: Guard, call: GuardedCall, spent: number): void {
  if (!guard.cap || !guard.prices) return;
  const left = { usd: guard.cap.usd - spent, name: `${guard.cap.name}, less the ${usd(spent)} this command already spent` };
  fitCap(ctx, call, guard.prices, sizeOf(call), left);
  guard.bound = worstBound(guard.prices, sizeOf(call)).bound;
}

/**
 * The lowest of --max-cost and what is left of each budget (unless --ignore-budget); a budget
 * already reached refuses the call (exit 4), and one that logging off cannot keep is said once.
 */
export async function capOf(ctx: RunContext<SpendOptions>, settings: Connected['settings']): Promise<Cap | undefined> {
  const { io, opts } = ctx;
  const caps: Cap[] = [];
  if (opts.maxCost !== undefined) caps.push({ usd: opts.maxCost, name: `--max-cost ${usd(opts.maxCost)}` });
  if (!opts.ignoreBudget) {
    const budgets = await budgetsFor(ctx.env, settings, { signal: ctx.signal });
    if (budgets.length && !ctx.logging && !warnedNoLog.has(io)) {
      warnedNoLog.add(io);
      io.note(`warning: with logging off this call is not in the usage ledger, so ${budgets.map((b) => b.name).join(' and ')} cannot be kept`);
    }
    for (const b of budgets) {
      if (b.spent >= b.limit) throw new CliError(reachedLine(b), EXIT.PAYMENT);
      caps.push({ usd: b.limit - b.spent, name: `what is left of ${b.name} (${usd(b.limit - b.spent)})` });
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

/** Lowers the completion limit to what the cap allows, or refuses the call. */
function fitCap(ctx: RunContext<SpendOptions>, call: GuardedCall, prices: Pricing[], size: CallSize, cap: Cap): void {
  const { bound } = worstBound(prices, size);
  if (bound <= cap.usd) return;
  // Never past a model's own maximum either: a fallback model might refuse a larger limit.
  const modelMost = Math.min(...prices.map((p) => p.maxCompletion ?? Infinity));
  const fits = call.completes && call.limitField ? Math.min(modelMost, completionWithin(prices, withLimitWritten(call, call.limitField), cap.usd)) : 0;
  const over = `this call could cost up to ${usdBound(bound)}, over ${cap.name}`;
  if (!call.completes || !call.limitField) throw new CliError(`${over}`, EXIT.PAYMENT);
  if (fits < 1) throw new CliError(`${over}: not even one completion token fits (the prompt alone may cost ${usdBound(worstBound(prices, { ...size, completionTokens: 0 }).bound)})`, EXIT.PAYMENT);
  if (call.explicitLimit) throw new CliError(`${over}: ${call.limitFlag} ${String(call.body[call.limitField])} does not fit; ${fits} or fewer would`, EXIT.PAYMENT);
  call.body[call.limitField] = fits;
  ctx.io.info(`max tokens lowered to ${fits} to stay within ${cap.name}`);
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
export async function pricesOf(ctx: RunContext<unknown>, client: Connected['client'], apiRoot: string, ids: (string | undefined)[]): Promise<Pricing[] | string> {
  const wanted = [...new Set(ids.filter((id): id is string => !!id))];
  if (wanted.length === 0) return 'no model is named (the service would choose one)';
  const { modelCatalog } = await import('./model-catalog.js');
  const list = await modelCatalog(client, { env: ctx.env, apiRoot, signal: ctx.signal });
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
