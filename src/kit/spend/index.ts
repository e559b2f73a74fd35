/** The spend guard, budgets and holds, the ledger and cost bounds: `router-cli/kit`'s part for money. */
export { SpendGuard, PROGRAM_WORDS, type SpendGuardOptions, type SpendWords, type SpendCall, type SpendEvents, type Checked, type Cap } from './spend-guard.js';
export { SpendError, BudgetReached, CostCapExceeded, CostUnbounded, BudgetUnkept, BudgetBusy, InvalidAmount, type SpendErrorCode, type Budget, type BudgetName } from './errors.js';
export { budgetsFor, budgetLimits, spentBy, usdAmount, type BudgetRead, type BudgetSettings, type Spent } from './budget.js';
export { BudgetHold, withBudgetLock, heldByOthers, type Held, type HoldCall } from './budget-hold.js';
export { appendUsage, ledgerPath, usageFields, type UsageRecord } from './ledger.js';
export { eachLedgerRecord } from './ledger-read.js';
export { reconcile, type Reconciled, type ReconcileReport } from './reconcile.js';
export type { HeldReport, HeldSettled } from './reconcile-held.js';
export type { SentCreate } from './sent-create.js';
export { readPricing, worstBound, usd, usdBound, type Pricing, type CallSize } from './cost-bound.js';
export { pricesFrom, serviceListPrices, type ListedModel } from './prices.js';
