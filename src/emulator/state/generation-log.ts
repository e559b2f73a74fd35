import type { KeptGeneration } from './store-api.js';

/** Generations kept: the newest this many (an older one is not found, as one the service has let go). */
export const KEEP = 10_000;

/** The generations a store keeps in memory, oldest first, bounded. */
export class GenerationLog {
  private readonly kept = new Map<string, KeptGeneration>();

  constructor(private readonly limit = KEEP) {}

  keep(id: string, generation: KeptGeneration): void {
    this.kept.delete(id);
    this.kept.set(id, generation);
    if (this.kept.size > this.limit) this.kept.delete(this.kept.keys().next().value!);
  }

  get(id: string): KeptGeneration | undefined {
    return this.kept.get(id);
  }

  all(): Iterable<KeptGeneration> {
    return this.kept.values();
  }
}

interface Generations {
  keep(id: string, kept: KeptGeneration): void;
  get(id: string): KeptGeneration | undefined;
  all(): Iterable<KeptGeneration>;
  end?(): void;
  /** Settles once the generations kept so far are written; undefined when none is to be. */
  idle?(): Promise<void> | undefined;
}

/**
 * The generations of calls and those of batch requests (`kept.batch`), each kept and bounded on its own:
 * a batch of 50,000 requests never pushes out the calls' generations that `router usage --reconcile`
 * asks for.
 */
export class CallsAndBatches<G extends Generations> implements Generations {
  constructor(private readonly calls: G, private readonly batched: G) {}

  keep(id: string, kept: KeptGeneration): void {
    (kept.batch ? this.batched : this.calls).keep(id, kept);
  }

  get(id: string): KeptGeneration | undefined {
    return this.calls.get(id) ?? this.batched.get(id);
  }

  *all(): Iterable<KeptGeneration> {
    yield* this.calls.all();
    yield* this.batched.all();
  }

  end(): void {
    this.calls.end?.();
    this.batched.end?.();
  }

  idle(): Promise<void> | undefined {
    const calls = this.calls.idle?.();
    const batched = this.batched.idle?.();
    return calls || batched ? Promise.all([calls, batched]).then(() => {}) : undefined;
  }

  /** Settles once every generation kept so far is written, those kept meanwhile too (a write's end may start the next). */
  async written(): Promise<void> {
    for (let writing = this.idle(); writing; writing = this.idle()) await writing;
  }
}
