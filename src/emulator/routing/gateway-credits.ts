import type { Ctx } from '../http/http.js';
import { chargeable, holdUntilSettled } from '../state/billing.js';
import { batchBound } from './batch-bound.js';
import { round } from '../models/models.js';
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
  const charged = Math.min(cost, Math.max(0, ctx.store.balance(ctx.workspace)));
  if (charged > 0) ctx.store.debit(ctx.workspace, charged, ctx.key.key);
  return charged;
}

/**
 * A gateway request's credits. When its cost is bounded (every candidate has prices, and the request
 * or the model a token limit: batch-bound.ts), the bound is held before any upstream is asked, so
 * concurrent requests cannot together spend past the balance (402 when it does not cover it); the
 * hold is settled at the real cost (past the hold, at most what is left of the balance), or at what a caller who hung up owes when the response closes
 * unanswered (the rest given back). Unbounded: a balance above zero is asked, and the real cost
 * charged up to what is left (chargeUpToBalance).
 */
export function gatewayCredits(ctx: Ctx, body: Body, endpoint: string, candidates: Candidate[]): GatewayCharge {
  const bound = batchBound(body, endpoint, candidates);
  let open = true;
  let owed: (() => number) | undefined;
  let held: { settle(cost: number): void } | undefined;
  const charge = ((cost: number) => {
    if (!open) return;
    open = false;
    // An upstream whose usage says more than the bound (more tokens than asked) is charged past the
    // hold only up to what is left of the balance, as an unbounded answer is: never below zero.
    if (held) held.settle((charge.charged = Math.min(cost, round(bound! + Math.max(0, ctx.store.balance(ctx.workspace))))));
    else charge.charged = chargeUpToBalance(ctx, cost);
  }) as GatewayCharge;
  const closed = () => {
    if (!open) return;
    open = false;
    const cut = owed ? owed() : 0;
    charge.hungUp = bound === undefined ? cut : Math.min(bound, cut);
    if (held) held.settle(charge.hungUp);
    else charge.hungUp = chargeUpToBalance(ctx, charge.hungUp);
    charge.charged = charge.hungUp;
  };
  charge.onHangUp = (fn) => {
    // Unbounded, nothing was held: a hang-up is heard only once it can owe something.
    if (bound === undefined && !owed) ctx.res.once('close', closed);
    owed = fn;
  };
  if (bound === undefined) chargeable(ctx);
  else {
    held = holdUntilSettled(ctx, bound);
    ctx.res.once('close', closed);
  }
  return charge;
}
