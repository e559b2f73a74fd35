/** Budgets and what the ledger holds against them: they live in the kit (`src/kit/spend/budget.ts`). */
export * from '../../kit/spend/budget.js';
