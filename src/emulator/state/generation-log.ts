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
