/**
 * What stops a call before it is sent, for money: each a class with a `code`. Nothing was sent when
 * one is thrown. The CLI maps them to exit codes (`cli/kit-words.ts`); a program reads `code`.
 */
import { KitError } from '../errors.js';

export type SpendErrorCode = 'budget_reached' | 'cost_cap_exceeded' | 'cost_unbounded' | 'budget_unkept' | 'budget_busy' | 'invalid_amount';

export class SpendError extends KitError<SpendErrorCode> {}

export type BudgetName = 'daily_budget' | 'monthly_budget';

export interface Budget {
  name: BudgetName;
  /** Where it was set: the environment variable or the profile's setting. */
  from: string;
  limit: number;
  /** What the ledger holds of the period, and what holds keep past their process (`kept`): as good as spent. */
  spent: number;
  /** The part of `spent` not in the ledger: batches not yet seen ended, calls the ledger could not take (budget-hold.ts). */
  kept: number;
  /** When the period ends and the spend counts from zero again. */
  resets: Date;
}

/** A budget is used up: nothing more is sent under it until it resets. */
export class BudgetReached extends SpendError {
  constructor(
    message: string,
    readonly budget: Budget,
  ) {
    super(message, 'budget_reached');
    this.name = 'BudgetReached';
  }
}

/** The call (or the next round of a tool loop) could cost more than the cap has left. */
export class CostCapExceeded extends SpendError {
  constructor(
    message: string,
    /** The most the call could cost, in USD. */
    readonly bound: number,
    /** What was left of the cap, in USD, and how the message names it. */
    readonly cap: { usd: number; name: string },
  ) {
    super(message, 'cost_cap_exceeded');
    this.name = 'CostCapExceeded';
  }
}

/** Under a cap, a call whose cost cannot be bounded (no prices for its model, a model chosen by the service). */
export class CostUnbounded extends SpendError {
  constructor(
    message: string,
    readonly why: string,
  ) {
    super(message, 'cost_unbounded');
    this.name = 'CostUnbounded';
  }
}

/** Under a budget, a call that could be neither held nor recorded (a state folder read-only or full). */
export class BudgetUnkept extends SpendError {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message, 'budget_unkept');
    this.name = 'BudgetUnkept';
  }
}

/** The budgets' lock was held by another process for longer than the wait. */
export class BudgetBusy extends SpendError {
  constructor(
    message: string,
    readonly holder: string,
  ) {
    super(message, 'budget_busy');
    this.name = 'BudgetBusy';
  }
}

/** An amount of USD that is not one ("2", "0.50"). */
export class InvalidAmount extends SpendError {
  constructor(message: string) {
    super(message, 'invalid_amount');
    this.name = 'InvalidAmount';
  }
}
