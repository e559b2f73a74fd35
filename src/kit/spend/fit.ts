/** The size of a call and the completion limit that fits it under a cap (the spend guard's arithmetic). */
import { completionWithin, countImages, promptTokenBound, searchesOf, usdBound, worstBound, type CallSize, type Pricing } from './cost-bound.js';

/** A call as the guard sees it: its body (whose completion limit it may lower) and what bounds it. */
export interface SpendCall {
  body: Record<string, unknown>;
  /** The models that may serve it (fallbacks included). */
  models: (string | undefined)[];
  /** The body's field that limits the completion; absent: the call's completion cannot be limited. */
  limitField?: string | undefined;
  /** How messages name that limit (a flag, an option); when `explicitLimit` it is never lowered. */
  limitFlag?: string | undefined;
  explicitLimit?: boolean | undefined;
  /** Whether the call is billed for completion tokens at all (embeddings and speech are not). */
  completes: boolean;
  /** Why no bound can be made before the call runs (a server-tool loop), if none can. */
  unboundable?: string | undefined;
  /** Requests the call is sent as (embeddings split into several). */
  requests?: number | undefined;
}

export interface Cap {
  usd: number;
  /** How a refusal names it: "--max-cost $0.010000" or "what is left of daily_budget ($1.450000, ROUTER_DAILY_BUDGET)". */
  name: string;
  /** What calls under way hold of the budget beside it: a call that does not fit waits for them. */
  held?: number | undefined;
}

export function sizeOf(call: SpendCall): CallSize {
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

export function describeLimit(prices: Pricing[], size: CallSize): string {
  const most = Math.max(...prices.map((p) => Math.min(size.completionTokens ?? Infinity, p.maxCompletion ?? Infinity)));
  return Number.isFinite(most) ? String(most) : 'unbounded';
}

/** The completion limit the call must be lowered to (undefined: it fits as it is), or why it cannot fit. */
export function fitting(call: SpendCall, prices: Pricing[], cap: Cap): number | string | undefined {
  const { bound } = worstBound(prices, sizeOf(call));
  if (bound <= cap.usd) return undefined;
  // Never past a model's own maximum either: a fallback model might refuse a larger limit.
  const modelMost = Math.min(...prices.map((p) => p.maxCompletion ?? Infinity));
  const over = `this call could cost up to ${usdBound(bound)}, over ${cap.name}`;
  if (!call.completes || !call.limitField) return over;
  // The prompt as it would be sent: with the limit written in, whose digits are prompt bytes too. A limit
  // the caller gave stays theirs: a smaller one they might give has no more digits than it.
  const limited = call.explicitLimit ? sizeOf(call) : withLimitWritten(call, call.limitField);
  const fits = Math.min(modelMost, completionWithin(prices, limited, cap.usd));
  if (fits < 1) return `${over}: not even one completion token fits (the prompt alone may cost ${usdBound(worstBound(prices, { ...limited, completionTokens: 0 }).bound)})`;
  if (call.explicitLimit) return `${over}: ${call.limitFlag} ${String(call.body[call.limitField])} does not fit; ${fits} or fewer would`;
  return fits;
}

/** The call's size once a limit is written into its body: sized with the longest number a limit can be. */
function withLimitWritten(call: SpendCall, field: string): CallSize {
  const had = call.body[field];
  call.body[field] = Number.MAX_SAFE_INTEGER;
  const size = sizeOf(call);
  if (had === undefined) delete call.body[field];
  else call.body[field] = had;
  return size;
}
