import { textHash } from './text-hash.js';

/**
 * Where the lines of the newest `max` ids start, in a file or the older one before it, oldest first:
 * in slots of typed arrays made once, twice `max` of them used in turn, each id found by its hash (a
 * chain of slots for each of a table's buckets), then told from another id of the same hash by its
 * line (`same`, read back only then). A Map entry and an id string per generation, kept for 10,000
 * generations, were copied by young collections and promoted, then collected by mark-compacts.
 */
export class LineIndex {
  private readonly hashes: Int32Array;
  private readonly starts: Float64Array;
  /** The file a slot's line is in, as the turn it was current in: the older file's is one less than `turn`. */
  private readonly turns: Int32Array;
  /** 0 once its id was kept again (or let go). */
  private readonly kept: Uint8Array;
  /** The next slot with the same bucket, -1 at a chain's end. */
  private readonly chained: Int32Array;
  /** The newest slot of each bucket's chain, -1 for none. */
  private readonly heads: Int32Array;
  private readonly slots: number;
  /** Slots are numbered in turn: these are the oldest in use and the next. */
  private oldest = 0;
  private next = 0;
  private turn = 0;
  /** Ids in the current file and in the older one. */
  private inCurrent = 0;
  private inOlder = 0;

  constructor(
    private readonly max: number,
    /** Whether the line at `at` (in the older file, or the current) is `id`'s. */
    private readonly same: (id: string, at: number, older: boolean) => boolean,
  ) {
    this.slots = 2 * max;
    this.hashes = new Int32Array(this.slots);
    this.starts = new Float64Array(this.slots);
    this.turns = new Int32Array(this.slots);
    this.kept = new Uint8Array(this.slots);
    this.chained = new Int32Array(this.slots);
    let buckets = 16;
    while (buckets < this.slots) buckets *= 2;
    this.heads = new Int32Array(buckets).fill(-1);
  }

  get size(): number {
    return this.inCurrent + this.inOlder;
  }

  /** Where `id`'s line starts, newest first, until `use` takes one (it gives true): whether one was taken. */
  find(id: string, use: (at: number, older: boolean) => boolean): boolean {
    const hash = textHash(id);
    for (let s = this.heads[hash & (this.heads.length - 1)]!; s >= 0; s = this.chained[s]!) {
      if (this.hashes[s] === hash && this.holds(s) && use(this.starts[s]!, this.turns[s] !== this.turn)) return true;
    }
    return false;
  }

  /** `id`'s line starts at `at` (in the older file, or the current): its newest; the oldest id let go past `max`. */
  set(id: string, at: number, older = false): void {
    this.delete(id);
    if (this.next - this.oldest === this.slots) this.dropOldest();
    const s = this.next++ % this.slots;
    const hash = textHash(id);
    const bucket = hash & (this.heads.length - 1);
    this.hashes[s] = hash;
    this.starts[s] = at;
    this.turns[s] = older ? this.turn - 1 : this.turn;
    this.kept[s] = 1;
    this.chained[s] = this.heads[bucket]!;
    this.heads[bucket] = s;
    if (older) this.inOlder++;
    else this.inCurrent++;
    while (this.size > this.max) this.dropOldest();
  }

  /** `id` is no longer in either file. */
  delete(id: string): void {
    const hash = textHash(id);
    for (let s = this.heads[hash & (this.heads.length - 1)]!; s >= 0; s = this.chained[s]!) {
      if (this.hashes[s] !== hash || !this.holds(s) || !this.same(id, this.starts[s]!, this.turns[s] !== this.turn)) continue;
      this.let(s);
      return;
    }
  }

  /** The current file becomes the older one; the older one's lines are gone. */
  rotate(): void {
    this.turn++;
    [this.inOlder, this.inCurrent] = [this.inCurrent, 0];
  }

  /** Where each line starts, oldest first (the older file's first). */
  *entries(): Iterable<[at: number, older: boolean]> {
    for (let n = this.oldest; n < this.next; n++) {
      const s = n % this.slots;
      if (this.holds(s)) yield [this.starts[s]!, this.turns[s] !== this.turn];
    }
  }

  /** Slot `s` is of an id still in either file. */
  private holds(s: number): boolean {
    return this.kept[s] === 1 && this.turns[s]! >= this.turn - 1;
  }

  private let(s: number): void {
    if (!this.holds(s)) return;
    if (this.turns[s] === this.turn) this.inCurrent--;
    else this.inOlder--;
    this.kept[s] = 0;
  }

  /** The oldest slot in use is no longer: its id let go, the slot out of its chain. */
  private dropOldest(): void {
    const s = this.oldest++ % this.slots;
    this.let(s);
    const bucket = this.hashes[s]! & (this.heads.length - 1);
    if (this.heads[bucket] === s) this.heads[bucket] = this.chained[s]!;
    else {
      let p = this.heads[bucket]!;
      while (this.chained[p] !== s) p = this.chained[p]!;
      this.chained[p] = this.chained[s]!;
    }
  }
}
