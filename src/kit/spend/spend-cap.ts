/**
 * What a call of the spend guard may cost at most: the lowest of the max cost (less what the work already spent) and what
 * is left of each budget beside what calls under way hold. A budget already reached is a BudgetReached; one that only
 * calls under way fill is a HeldBack (the call waits for them).
 */
import { budgetsFor, reachedLine } from './budget.js';
import { usd, usdWritten } from './cost-bound.js';
import { BudgetReached } from './errors.js';
import { roundCost } from '../../internal/round-cost.js';
import type { Held } from './held-by-others.js';
import type { Cap } from './fit.js';
import type { SpendGuardOptions, SpendWords } from './spend-guard-options.js';

/** A call that fits the budgets only once calls under way end (and their holds with them). */
export class HeldBack extends Error {}

/** What of a spend guard its cap is read from. */
export interface CapSource {
  readonly opts: SpendGuardOptions;
  readonly env: NodeJS.ProcessEnv;
  readonly words: SpendWords;
}

/** How a cap names what the work already spent. */
export function spentOff(words: SpendWords, spent: number): string {
  return `less the ${usd(spent)} ${words.spender} already spent`;
}

/**
 * The lowest of the max cost (less what the work already `spent`) and what is left of each budget
 * (unless ignored) beside what calls under way hold; a budget already reached is a BudgetReached.
 */
export async function capOf(g: CapSource, held?: Held, spent = 0): Promise<Cap | undefined> {
  const { maxCost, budgets: settings, ignoreBudget } = g.opts;
  const caps: Cap[] = [];
  if (maxCost !== undefined) caps.push({ usd: maxCost - spent, name: `${g.words.maxCost} ${usdWritten(maxCost)}${spent ? `, ${spentOff(g.words, spent)}` : ''}` });
  if (!ignoreBudget && settings) {
    // Spent is what the ledger holds and what holds keep past their processes, as `router usage` shows it.
    const budgets = await budgetsFor(g.env, settings, { signal: g.opts.signal, kept: held ? (held.kept ?? 0) : undefined, damaged: (lines, ledger, at) => g.opts.on?.damaged?.(lines, ledger, at) });
    if (budgets.length && g.opts.recorded === false) g.opts.on?.unkept?.(budgets.map((b) => b.name));
    for (const b of budgets) {
      if (b.spent >= b.limit) {
        // A dry run sends nothing: it shows the call, and says the budget would refuse it.
        if (!g.opts.estimate) throw new BudgetReached(reachedLine(b, g.words.ignoreBudget), b);
        g.opts.on?.reached?.(reachedLine(b, g.words.ignoreBudget));
        continue;
      }
      const left = roundCost(b.limit - b.spent);
      const from = b.kept ? `${b.from}, after the ${usd(b.kept)} held by batches not yet seen ended or calls the ledger could not take` : b.from;
      if (!held?.calls) {
        caps.push({ usd: left, name: `what is left of ${b.name} (${usd(left)}, ${from})` });
        continue;
      }
      const beside = `${b.name} (${usd(left)} left, ${from}) beside the ${usd(held.usd)} ${held.calls === 1 ? 'a call under way holds' : `${held.calls} calls under way hold`}`;
      if (left <= held.usd) throw new HeldBack(`nothing is left of ${beside}`);
      caps.push({ usd: left - held.usd, name: `what is left of ${beside}`, held: held.usd });
    }
  }
  return caps.reduce<Cap | undefined>((low, c) => (!low || c.usd < low.usd ? c : low), undefined);
}
