import type { UsageRecord } from './ledger.js';

type Reconciling = UsageRecord & { reconciles?: unknown; real_cost?: unknown };

/**
 * A negative cost makes room in a budget: the one router writes is reconcile's, which names a call read before,
 * says what it really cost (`real_cost`, not below 0) and takes the call's cost down to it, once. Any other
 * (a hand-edited `-5`, a second reconcile of one call) is refused.
 */
export class NegativeCosts {
  /** The calls read so far by id, with their cost. */
  private readonly costs = new Map<string, number>();

  /** Whether `r` (a record with a finite cost) may be counted. */
  take(r: Reconciling): boolean {
    const cost = r.cost!;
    if (cost >= 0) {
      if (typeof r.id === 'string' && cost > 0 && !r.batch_id) this.costs.set(r.id, cost);
      return true;
    }
    if (typeof r.reconciles !== 'string' || typeof r.real_cost !== 'number' || !(r.real_cost >= 0)) return false;
    const was = this.costs.get(r.reconciles);
    if (was === undefined || Math.abs(was + cost - r.real_cost) > 1e-9) return false;
    this.costs.delete(r.reconciles);
    return true;
  }
}
