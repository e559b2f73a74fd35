/**
 * Holds on the budgets (`src/kit/spend/budget-hold.ts`). The CLI's holds also go when the process
 * exits, whatever the command did (a hold left would keep what it holds until found stale).
 */
import { BudgetHold as KitHold } from '../../kit/spend/budget-hold.js';

export { BATCH_HOLD_MAX_AGE_MS, HOLD_MAX_AGE_MS, budgetUnkept, heldByOthers, holdNames, holdsChange, holdsDir, isStale, withBudgetLock, type Held, type HoldRecord } from '../../kit/spend/budget-hold.js';

export class BudgetHold extends KitHold {
  protected override placed(): void {
    process.once('exit', this.release);
  }

  protected override unplaced(): void {
    process.off('exit', this.release);
  }
}
