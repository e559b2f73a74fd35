/** The bounds of a guard's calls checked and not yet answered or failed: what they may still cost, beside what it spent. */
export class Underway {
  private readonly bounds: number[] = [];
  private waiters: (() => void)[] = [];

  get total(): number {
    return this.bounds.reduce((sum, b) => sum + b, 0);
  }

  get count(): number {
    return this.bounds.length;
  }

  add(bound: number | undefined): void {
    if (bound !== undefined) this.bounds.push(bound);
  }

  /** A call ended. Which one is not known: the smallest bound goes, so what is kept is never less than what may still be spent. */
  settle(): void {
    if (this.bounds.length) this.bounds.splice(this.bounds.indexOf(Math.min(...this.bounds)), 1);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The largest bound under way, 0 if none: what a call that ended unknown (which one is not known) may have cost at most. */
  get largest(): number {
    return this.bounds.length ? Math.max(...this.bounds) : 0;
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
