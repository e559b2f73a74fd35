import type { UsageRecord } from './ledger.js';

type Reconciling = UsageRecord & { reconciles?: unknown; real_cost?: unknown };

/**
 * A negative cost makes room in a budget: the one router writes is reconcile's, which names a call read before,
 * says what it really cost (`real_cost`, not below 0) and takes the call's cost down to it; a later one of the same call
 * only from what the earlier left. Any other (a hand-edited `-5`, a second reconcile of one call) is refused.
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
    // What it counts now: a line settled at a part of its bound (abandon()'s, by the key's spend) is taken back by its call's late end.
    if (r.real_cost > 0) this.costs.set(r.reconciles, r.real_cost);
    else this.costs.delete(r.reconciles);
    return true;
  }
}
