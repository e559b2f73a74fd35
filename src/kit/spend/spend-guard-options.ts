/** What a spend guard takes (its options, the events it tells of, the words of its refusals) and what a check finds. */
import type { BudgetSettings } from './budget.js';
import type { BudgetHold, HoldCall } from './budget-hold.js';
import type { CallSize, Pricing } from './cost-bound.js';
import type { Cap } from './fit.js';
import { checkOptions, optionNames } from '../../client/option-names.js';
import { ValidationError } from '../../client/errors.js';
import { InvalidAmount } from './errors.js';
import { shownGiven } from '../../internal/shape.js';

/** What a check found: the bound of the call as it will be sent, and what held it. */
export interface Checked {
  bound?: number | undefined;
  /** The model whose prices make the bound, and the call's size then (its prompt, its completion limit). */
  boundModel?: string | undefined;
  size?: CallSize | undefined;
  /** The most completion tokens the call may produce, as a person reads it ("512", "unbounded"). */
  completionMost?: string | undefined;
  /** Why no bound could be made (only without a cap: under one that is a CostUnbounded). */
  unknown?: string | undefined;
  cap?: Cap | undefined;
  prices?: Pricing[] | undefined;
  /** What the call holds of the budgets while it runs (released when its cost is in the ledger). */
  hold?: BudgetHold | undefined;
}

export interface SpendEvents {
  /** The completion limit was lowered to fit the cap. */
  lowered?(tokens: number, cap: Cap): void;
  /** The call fits only once calls under way end: it waits for them (said once a check). */
  waiting?(why: string): void;
  /** Budgets are set but calls are not recorded: they cannot be kept. */
  unkept?(budgets: string[]): void;
  /** A hold on the budgets was placed for this work (release it when the work ends). */
  hold?(hold: BudgetHold): void;
  /** The ledger has `lines` damaged lines (torn, overwritten, a cost no call wrote: a string, a negative one), whose cost the budgets do not count (said on each check); `at`: the first lines' numbers. */
  damaged?(lines: number, ledger: string, at: number[]): void;
  /** An estimate (a dry run) under a budget already reached: the call would be refused with this line (a BudgetReached). */
  reached?(line: string): void;
}

/** The names of SpendGuardOptions' members, checked against it both ways (a new option is a name here too). */
const SPEND_GUARD_OPTIONS = optionNames<SpendGuardOptions>()({ prices: 1, env: 1, maxCost: 1, budgets: 1, ignoreBudget: 1, recorded: 1, estimate: 1, signal: 1, on: 1, newHold: 1, words: 1 });

/** A guard's options, once none is one it does not know (`checkOptions`). */
export function checkedOptions(opts: SpendGuardOptions): SpendGuardOptions {
  checkOptions('new SpendGuard()', opts, SPEND_GUARD_OPTIONS);
  // Else a TypeError at the first check, far from the cause (from JavaScript, or a list given as it is).
  const { maxCost } = opts as { maxCost?: unknown };
  // Else no cap at all: every comparison with a NaN or a string is false, and so no call is over it.
  if (maxCost !== undefined && !(typeof maxCost === 'number' && Number.isFinite(maxCost) && maxCost >= 0)) {
    throw new InvalidAmount(`${(opts.words ?? PROGRAM_WORDS).maxCost} is an amount of USD such as 2 or 0.50, got ${shownGiven(maxCost)}`);
  }
  if (typeof opts.prices !== 'function') throw new ValidationError('new SpendGuard() needs prices, a function of the models\' ids: serviceListPrices(client), or pricesFrom(list) for a model list you keep');
  return opts;
}

export interface SpendGuardOptions {
  /** The prices of these models, or a sentence saying why there are none; `refresh` asks for the list afresh. */
  prices: (models: string[], refresh: boolean) => Promise<Pricing[] | string>;
  /** Where the ledger and the holds live (ROUTER_STATE_DIR, XDG_STATE_HOME); the process's environment if absent. */
  env?: NodeJS.ProcessEnv | undefined;
  /** The most the work may cost, in USD. */
  maxCost?: number | undefined;
  /** The daily and monthly budgets and the profile they count for (the ledger's records of it). */
  budgets?: BudgetSettings | undefined;
  ignoreBudget?: boolean | undefined;
  /** Whether this work's calls go to the ledger (`record`); by default when budgets are given. False: the budgets cannot be kept, and nothing is held. */
  recorded?: boolean | undefined;
  /** Bound the call even without a cap (a dry run): nothing is held then. */
  estimate?: boolean | undefined;
  signal?: AbortSignal | undefined;
  on?: SpendEvents | undefined;
  /**
   * Makes the holds (the CLI's also go at the process's exit); `call` says what is held for, should its process be killed;
   * `ignoreBudget` (the guard's words) is how the hold's refusal names the way past the budgets.
   */
  newHold?: ((env: NodeJS.ProcessEnv, profile: string, usd: number, call: HoldCall, ignoreBudget: string) => BudgetHold) | undefined;
  /** How refusals name what was set: the program's options by default, the CLI's flags from the CLI. */
  words?: SpendWords | undefined;
}

/** The names a refusal gives the cap, the way past a budget, and whose calls spent what is taken off the cap. */
export interface SpendWords {
  maxCost: string;
  ignoreBudget: string;
  spender: string;
}

/** A program's words: the options it gave the guard. */
export const PROGRAM_WORDS: SpendWords = { maxCost: 'maxCost', ignoreBudget: 'ignoreBudget: true', spender: "this guard's calls" };
