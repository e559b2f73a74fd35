/**
 * A spend guard's check made under the budgets' lock (budget-lock.ts), beside what calls under way in any process hold,
 * and the hold of its bound placed (or set) in the same turn of the lock. A call that would fit once those calls end waits
 * for a hold to change; one that would not is refused by the check itself.
 */
import { BudgetHold, heldByOthers, holdNames, holdsChange, withBudgetLock, type Held, type HoldCall } from './budget-hold.js';
import { HeldBack, type CapSource } from './spend-cap.js';
import type { Checked } from './spend-guard-options.js';

/** Checks with `attempt` under the lock; holds the bound (in `hold`, where the work holds already) until its cost is in the ledger. */
export async function checkUnderLock(g: CapSource, attempt: (held: Held) => Promise<Checked>, hold?: BudgetHold, model?: string, beside = 0): Promise<Checked> {
  const { env, words } = g;
  const profile = g.opts.budgets!.profile;
  const signal = g.opts.signal ?? new AbortController().signal;
  for (let said = false; ; said = true) {
    // The holds as this check sees them: one released after it (even before the wait begins) ends the wait.
    let seen = '';
    const out = await withBudgetLock(env, signal, async () => {
      const held = heldByOthers(env, profile, hold);
      seen = holdNames(env);
      try {
        const checked = await attempt(held);
        if (checked.bound === undefined) return checked;
        // One hold covers all of the guard's calls under way.
        if (hold) hold.set(checked.bound + beside, false, beside ? undefined : new Date().toISOString());
        else {
          const call: HoldCall = model ? { model } : {};
          const usd = checked.bound + beside;
          checked.hold = g.opts.newHold ? g.opts.newHold(env, profile, usd, call, words.ignoreBudget) : new BudgetHold(env, profile, usd, call, words.ignoreBudget);
          g.opts.on?.hold?.(checked.hold);
        }
        return checked;
      } catch (err) {
        if (err instanceof HeldBack) return err;
        throw err;
      }
    }, undefined, words.ignoreBudget);
    if (!(out instanceof HeldBack)) return out;
    // A call that waits holds nothing (its earlier calls are in the ledger): two tool loops never wait for each other.
    hold?.set(beside);
    if (!said) g.opts.on?.waiting?.(out.message);
    await holdsChange(env, signal, seen);
  }
}
