/** The credit rules both stores keep alike: a balance is credits less usage; a hold takes the cost at once or not at all. */
import { round } from '../models/models.js';
import type { Workspace } from './store-api.js';

export abstract class CreditRules {
  abstract workspace(id: string): Workspace;
  abstract debit(id: string, cost: number): void;
  abstract charged(key: string): boolean;
  abstract debitOnce(id: string, cost: number, key: string): boolean;

  balance(id: string): number {
    const ws = this.workspace(id);
    return round(ws.total_credits - ws.total_usage);
  }

  /** Whether a hold of `cost` is refused: the balance is not above zero, or does not cover it. */
  private short(id: string, cost: number): boolean {
    const balance = this.balance(id);
    return balance <= 0 || balance < cost;
  }

  hold(id: string, cost: number): boolean {
    if (this.short(id, cost)) return false;
    this.debit(id, cost);
    return true;
  }

  holdOnce(id: string, cost: number, key: string): boolean {
    if (this.charged(key)) return true;
    return !this.short(id, cost) && this.debitOnce(id, cost, key);
  }
}
