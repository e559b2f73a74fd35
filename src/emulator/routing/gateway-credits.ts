import type { Ctx } from '../http/http.js';
import { balanceLeft, chargeable, holdEstimate, holdUntilSettled, keyLimitLeft } from '../state/billing.js';
import { batchBound } from './batch-bound.js';
import { round } from '../models/models.js';
import { ESTIMATES_KEPT } from '../state/store-api.js';
import type { Candidate } from './candidates.js';

type Body = Record<string, unknown>;

/** Charges a whole answer's cost; told what a caller who hangs up mid-stream owes. */
export interface GatewayCharge {
  (cost: number): void;
  /**
   * Once the caller's stream is open: what it owes if it hangs up before its end (`owed()` at the
   * hang-up, capped at the bound when one was held), charged at once. Unset, a hang-up owes nothing.
   */
  onHangUp(owed: () => number): void;
  /**
   * Settles at `owed` (capped at the bound when one was held, at what is left of the balance past
   * it), as a hang-up is: for a stream the upstream broke after content went out. Its own
   * charge only when nothing settled it before.
   */
  cut(owed: number): void;
  /**
   * A whole (not streamed) answer is read to its end after its caller is gone, and charged as the
   * service bills it: the caller's hang-up settles nothing; charge() or release() does.
   */
  readsWhole(): void;
  /** Settles what nothing settled yet as a hang-up would (nothing, unless a stream told onHangUp): a request that ends unanswered. */
  release(): void;
  /** What the hang-up was charged, once it came. */
  hungUp?: number;
  /** What was charged, once it was (less than the cost when an unbounded one found less credit left). */
  charged?: number;
}

/**
 * Charges a cost nothing bounded before the answer: at most what is left of the balance, so
 * unbounded requests in flight together never take it below zero (what they cost past it is not
 * charged). Returns what was charged.
 */
export function chargeUpToBalance(ctx: Ctx, cost: number): number {
  const charged = Math.min(cost, Math.max(0, balanceLeft(ctx)));
  if (charged > 0) ctx.store.debit(ctx.workspace, charged, ctx.key.key, ctx.paying);
  return charged;
}

/**
 * What an unbounded request holds while in flight: the largest cost an answer of the same endpoint
 * and model has had (nothing before the first), so a burst of them together cannot pass a key's
 * limit or the balance as far as the answers so far tell. At most 10,000 models, in `largest`: the
 * store's table (Store.estimates), saved with its state, so a restart keeps what was learned.
 */
export class Estimates {
  constructor(private readonly largest = new Map<string, number>()) {}

  get(key: string): number {
    return this.largest.get(key) ?? 0;
  }

  note(key: string, cost: number): void {
    if (!(cost > (this.largest.get(key) ?? 0)) || !Number.isFinite(cost)) return;
    // A table loaded longer than the cap (Store.estimates keeps at most ESTIMATES_KEPT) still shrinks to it.
    while (this.largest.size >= ESTIMATES_KEPT && !this.largest.has(key)) this.largest.delete(this.largest.keys().next().value!);
    this.largest.set(key, round(cost));
  }
}

/**
 * A gateway request's credits. When its cost is bounded (every candidate has prices, and the request
 * or the model a token limit: batch-bound.ts), the bound is held before any upstream is asked, so
 * concurrent requests cannot together spend past the balance (402 when it does not cover it); the
 * hold is settled at the real cost (past the hold, at most what is left of the balance), or at what a caller who hung up owes when the response closes
 * unanswered (the rest given back). Unbounded: a balance above zero is asked, an estimate held in
 * memory while it runs when there is one (Estimates; one journal line, the charge), and the real cost
 * charged up to what is left.
 */
export function gatewayCredits(ctx: Ctx, body: Body, endpoint: string, candidates: Candidate[], estimates?: Estimates): GatewayCharge {
  const bound = batchBound(body, endpoint, candidates);
  // Unbounded: the largest cost of this model's answers so far is held while it runs (never charged as such).
  const seen = `${endpoint}\n${candidates[0]?.model.id ?? ''}`;
  // At most what the balance and the key's limit have left: alone, it is let through as before; in a burst, the later ones find nothing left.
  const hold = bound ?? Math.max(0, Math.min(estimates?.get(seen) ?? 0, balanceLeft(ctx), keyLimitLeft(ctx) ?? Infinity));
  let open = true;
  let owed: (() => number) | undefined;
  let held: ReturnType<typeof holdUntilSettled> | undefined;
  let estimate: { release(): void } | undefined;
  // What a held request may be charged: past its hold, only what is left of the balance (never below zero).
  const upToBalance = (cost: number) => Math.min(cost, round(hold + Math.max(0, ctx.store.balance(ctx.workspace))));
  const charge = ((cost: number) => {
    if (!open) return;
    open = false;
    if (bound === undefined) estimates?.note(seen, cost);
    // An upstream whose usage says more than the bound (more tokens than asked) is charged past the
    // hold only up to what is left of the balance, as an unbounded answer is: never below zero.
    estimate?.release();
    if (held) held.settle((charge.charged = upToBalance(cost)));
    else charge.charged = chargeUpToBalance(ctx, cost);
  }) as GatewayCharge;
  /**
   * Settles what a stream cut before its end (by the caller or the upstream) owes; what was charged.
   * Unbounded, the cut's cost is noted in the estimates as a whole answer's is: a model whose streams
   * are cut learns an estimate too.
   */
  const settleCut = (cut: number): number => {
    open = false;
    if (bound === undefined) estimates?.note(seen, cut);
    const capped = bound === undefined ? cut : Math.min(bound, cut);
    estimate?.release();
    if (held) held.settle((charge.charged = upToBalance(capped)));
    else charge.charged = chargeUpToBalance(ctx, capped);
    return charge.charged;
  };
  let whole = false;
  charge.release = () => {
    if (open) charge.hungUp = settleCut(owed ? owed() : 0);
  };
  const closed = () => whole || charge.release();
  charge.readsWhole = () => (whole = true);
  charge.cut = (cut) => {
    if (open) settleCut(cut);
  };
  charge.onHangUp = (fn) => {
    // Nothing was held: a hang-up is heard only once it can owe something.
    if (!held && !estimate && !owed) ctx.res.once('close', closed);
    owed = fn;
  };
  if (bound === undefined) {
    chargeable(ctx);
    if (hold > 0) estimate = holdEstimate(ctx, hold);
  } else held = holdUntilSettled(ctx, hold, true);
  if (held || estimate) ctx.res.once('close', closed);
  return charge;
}
