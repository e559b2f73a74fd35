import type { UsageRecord } from './ledger.js';

/** A call checked and not yet answered or failed: its bound, the call checked (where said), and whether abandon() counted it. */
export interface UnderwayCall {
  bound: number;
  call?: object | undefined;
  /** ISO 8601, when it was checked (before it was sent): where the time an abandoned call was sent in begins. */
  since: string;
  /**
   * abandon() counted it at its bound while it may still run; `line`: the ledger line that counts it, if one was written; else `kept`:
   * the hold that keeps its bound for a day in its stead (the ledger took no line), if one does.
   */
  abandoned?: { line?: UsageRecord & { id: string; cost: number; unsettled: string } | undefined; kept?: string | undefined } | undefined;
}

/** The bounds of a guard's calls checked and not yet answered or failed: what they may still cost, beside what it spent. */
export class Underway {
  private readonly calls: UnderwayCall[] = [];
  private waiters: (() => void)[] = [];

  /** The calls under way that abandon() has not counted: what checks are held beside. */
  get live(): UnderwayCall[] {
    return this.calls.filter((c) => !c.abandoned);
  }

  get total(): number {
    return this.live.reduce((sum, c) => sum + c.bound, 0);
  }

  get count(): number {
    return this.live.length;
  }

  add(bound: number | undefined, call?: object): void {
    if (bound !== undefined) this.calls.push({ bound, since: new Date().toISOString(), ...(call ? { call } : {}) });
  }

  /**
   * A call ended: `call`, the one checked, where the caller says it (none if it was never added); else one not known,
   * whose smallest bound goes, so what is kept is never less than what may still be spent: one not abandoned, else an
   * abandoned one (every checked call ends once). Returns the one taken off.
   */
  settle(call?: object): UnderwayCall | undefined {
    const pool = call ? this.calls.filter((c) => c.call === call).slice(0, 1) : this.live.length ? this.live : this.calls;
    const ended = pool.length ? pool.reduce((low, c) => (c.bound < low.bound ? c : low)) : undefined;
    if (ended) this.calls.splice(this.calls.indexOf(ended), 1);
    for (const wake of this.waiters.splice(0)) wake();
    return ended;
  }

  /** The largest bound under way, 0 if none: what a call that ended unknown (which one is not known) may have cost at most. */
  get largest(): number {
    return this.live.reduce((most, c) => Math.max(most, c.bound), 0);
  }

  /** Ends the calls under way that abandon() has not counted (they stay, marked, for their late ending); returns them. */
  abandon(): UnderwayCall[] {
    const lost = this.live;
    for (const c of lost) c.abandoned = {};
    for (const wake of this.waiters.splice(0)) wake();
    return lost;
  }

  /** Resolves once a call ends; rejects with the signal's reason once it is aborted. */
  ended(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const stop = () => reject(signal!.reason);
      signal?.addEventListener('abort', stop, { once: true });
      this.waiters.push(() => {
        signal?.removeEventListener('abort', stop);
        resolve();
      });
    });
  }
}
