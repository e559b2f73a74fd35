/**
 * The budgets' lock (`budget-holds/.lock`), under which a call is checked and its hold placed
 * (./budget-hold.ts), the folder of the holds, and the refusal of a call whose hold cannot be kept.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { stateHome } from '../../config/state-dir.js';
import { describeHolder, leftBehind, takeLock } from '../../internal/file-lock.js';
import { makeDir } from '../../internal/make-dir.js';
import { sleep } from '../../internal/sleep.js';
import { describeCode } from '../../internal/system-errors.js';
import { BudgetBusy, BudgetUnkept } from './errors.js';

export function holdsDir(env: NodeJS.ProcessEnv): string {
  return join(stateHome(env), 'budget-holds');
}

/**
 * The refusal of a call under a budget whose hold or ledger line cannot be written (the CLI's exit 4, as a budget
 * reached); `ignoreBudget` names the way past it (the guard's words: a program's option, the CLI's flag).
 */
export function budgetUnkept(path: string, err: unknown, ignoreBudget = '--ignore-budget'): BudgetUnkept {
  const code = (err as NodeJS.ErrnoException)?.code;
  const why = code ? describeCode(code) : ((err as Error)?.message ?? String(err));
  return new BudgetUnkept(`the budgets cannot be kept: ${path} cannot be written (${why}), so this call could be neither held nor recorded; nothing was sent (${ignoreBudget} sends it anyway)`, path);
}

/**
 * Runs `check` holding the budgets' lock, so that what it reads (the ledger, the holds) stays
 * true until the hold it places is written. Waits for another process's check, Ctrl-C included.
 */
export async function withBudgetLock<T>(env: NodeJS.ProcessEnv, signal: AbortSignal, check: () => Promise<T>, waitMs = 60_000, ignoreBudget?: string): Promise<T> {
  const dir = holdsDir(env);
  const lock = join(dir, '.lock');
  const until = Date.now() + waitMs;
  const left = leftBehind();
  for (;;) {
    let taken: ReturnType<typeof takeLock>;
    try {
      makeDir(dir);
      taken = takeLock(lock);
    } catch (err) {
      throw budgetUnkept(dir, err, ignoreBudget);
    }
    if ('release' in taken) {
      try {
        return await check();
      } finally {
        taken.release();
      }
    }
    // One of another machine or pid namespace, left by a process killed while holding it: taken over.
    if (left(lock, taken)) continue;
    if (Date.now() > until) throw new BudgetBusy(`the budgets are being checked by ${describeHolder({ pid: taken.holder, host: taken.host, elsewhere: taken.elsewhere })} for over ${waitMs / 1000} s: try again, or remove ${lock} if no router runs`, String(taken.holder));
    await sleep(10, signal);
  }
}

/** Names of the holds there are: a change says that a call under way has ended (or begun). */
export function holdNames(env: NodeJS.ProcessEnv): string {
  try {
    return readdirSync(holdsDir(env)).filter((n) => n.endsWith('.json')).sort().join('\n');
  } catch {
    return '';
  }
}

/**
 * Waits until the holds differ from `seen` (a call under way ended), for a check that did not fit
 * beside them; at most a few seconds, as a hold lessened (a cost in the ledger) keeps its name.
 */
export async function holdsChange(env: NodeJS.ProcessEnv, signal: AbortSignal, seen: string): Promise<void> {
  for (let i = 0; i < 40 && holdNames(env) === seen; i++) await sleep(50, signal);
}
