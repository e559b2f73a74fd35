import type { Ctx } from '../http/http.js';
import { chargeable, reserve } from '../state/billing.js';
import { round } from '../models/models.js';
import { batchBound } from './batch-bound.js';
import type { Candidate } from './candidates.js';

type Body = Record<string, unknown>;

/**
 * A gateway request's credits. When its cost is bounded (every candidate has prices, the request a
 * token limit), the bound is held before any upstream is asked, so concurrent requests cannot
 * together spend past the balance (402 when it does not cover it); the hold is settled at the real
 * cost, or given back when the response closes unanswered. Unbounded: a balance above zero is asked,
 * and the real cost charged (requests in flight together may take the balance below zero).
 */
export function gatewayCredits(ctx: Ctx, body: Body, endpoint: string, candidates: Candidate[]): (cost: number) => void {
  const workspace = ctx.workspace;
  const bound = batchBound(body, endpoint, candidates);
  if (bound === undefined) {
    chargeable(ctx);
    return (cost) => ctx.store.debit(workspace, cost);
  }
  reserve(ctx, bound);
  let open = true;
  ctx.res.once('close', () => {
    if (open) ctx.store.refund(workspace, bound);
    open = false;
  });
  return (cost) => {
    if (!open) return;
    open = false;
    if (cost > bound) ctx.store.debit(workspace, round(cost - bound));
    else ctx.store.refund(workspace, round(bound - cost));
  };
}
