/** The credit rules both stores keep alike: a balance is credits less usage; a hold takes the cost at once or not at all. */
import { round } from '../models/models.js';
import { OpenHolds } from './open-holds.js';
import type { GenerationMark, Workspace } from './store-api.js';
import { paying, type Paying } from './paying.js';

export abstract class CreditRules {
  abstract workspace(id: string): Workspace;
  abstract debit(id: string, cost: number, key?: string, generation?: GenerationMark): void;
  abstract charged(key: string): boolean;
  abstract debitOnce(id: string, cost: number, key: string): boolean;
  abstract refund(id: string, cost: number, key?: string): void;
  abstract keyUsed(key: string, cost: number): void;
  /** Requests' holds not yet settled, by id. */
  protected readonly openHolds = new OpenHolds();
  private holdsMade = 0;

  balance(id: string): number {
    const ws = this.workspace(id);
    return round(ws.total_credits - ws.total_usage);
  }

  /** Whether a hold of `cost` is refused: the balance is not above zero, or does not cover it. */
  private short(id: string, cost: number): boolean {
    const balance = this.balance(id);
    return balance <= 0 || balance < cost;
  }

  hold(id: string, cost: number, key?: string, generation?: GenerationMark): boolean {
    if (this.short(id, cost)) return false;
    this.debit(id, cost, key, generation);
    return true;
  }

  holdRequest(id: string, cost: number): number {
    if (this.short(id, cost)) return 0;
    const hold = this.nextHoldId();
    this.openHolds.set(hold, id, cost);
    this.moveHeld(id, cost, { h: hold });
    return hold;
  }

  settleRequest(id: string, hold: number, cost: number, key?: string, generation?: GenerationMark): void {
    const held = this.openHolds.take(hold);
    if (held === undefined) return;
    this.moveHeld(id, round(cost - held), { r: hold, ...paying(generation) }, key === undefined ? undefined : { key, cost });
  }

  protected nextHoldId(): number {
    return ++this.holdsMade;
  }

  /** Moves a hold's cost (`h`: taken by hold h; `r`: hold r settled), and counts `use` on its key. The file store journals the mark and the use with it, in one line. */
  protected moveHeld(id: string, cost: number, _mark: { h?: number; r?: number } & Paying, use?: { key: string; cost: number }): void {
    if (cost > 0) this.debit(id, cost);
    else if (cost < 0) this.refund(id, -cost);
    if (use) this.keyUsed(use.key, use.cost);
  }

  /**
   * What settling a hold of `held` at `cost` moves: given back in full, or charged up to what is left
   * of the balance, never below zero (an answer whose cost no bound held: what it cost past the
   * balance is not charged).
   */
  protected settlement(id: string, held: number, cost: number): number {
    const due = round(cost - held);
    return due > 0 ? Math.min(due, Math.max(0, this.balance(id))) : due;
  }

  holdOnce(id: string, cost: number, key: string): boolean {
    if (this.charged(key)) return true;
    return !this.short(id, cost) && this.debitOnce(id, cost, key);
  }
}
