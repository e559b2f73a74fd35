/**
 * Texts kept as UTF-8 bytes one after another in one buffer used as a ring: each at a position that
 * only grows (its place in the buffer is the position modulo the buffer's size, a text never split
 * at the buffer's end). The buffer doubles rather than write over bytes still wanted (those from the
 * position given to release() on). A kept text is no object on V8's heap: a string kept per request
 * by a store that keeps the newest thousand was copied by every young collection, then promoted.
 */
export class ByteRing {
  private bytes: Buffer;
  /** The first position still wanted, and the next one to write. */
  private first = 0;
  private next = 0;

  constructor(private size = 64 * 1024) {
    this.bytes = Buffer.allocUnsafe(size);
  }

  /** Keeps `text`, `length` its bytes (Buffer.byteLength): its position. */
  put(text: string, length: number): number {
    return this.placed(length, (at) => this.bytes.write(text, at, length, 'utf8'));
  }

  /** Keeps `bytes` as they are: their position. */
  putBytes(bytes: Uint8Array): number {
    return this.placed(bytes.length, (at) => this.bytes.set(bytes, at));
  }

  /** The text of `length` bytes kept at `at`. */
  text(at: number, length: number): string {
    const i = at % this.size;
    return this.bytes.toString('utf8', i, i + length);
  }

  /** Bytes before `at` are no longer wanted: they may be written over. */
  release(at: number): void {
    this.first = Math.max(this.first, Math.min(at, this.next));
  }

  /** Nothing kept is wanted. */
  clear(): void {
    this.first = this.next;
  }

  private placed(length: number, write: (at: number) => void): number {
    for (;;) {
      // A text that would run past the buffer's end begins at its start (one larger than the buffer needs it grown first).
      const offset = this.next % this.size;
      if (offset && offset + length > this.size) this.next += this.size - offset;
      if (this.next + length - this.first <= this.size && (this.next % this.size) + length <= this.size) break;
      // Grown, the text may again run past the end: a text longer than the old size can start at its last stretch.
      this.grow(length);
    }
    const at = this.next;
    write(at % this.size);
    this.next += length;
    return at;
  }

  /** A buffer twice as large (or more) holding what is still wanted at the same positions. */
  private grow(length: number): void {
    let size = this.size * 2;
    while (this.next + length - this.first > size) size *= 2;
    const bytes = Buffer.allocUnsafe(size);
    // Whole stretches of the old size lie within one stretch of the new size (a multiple of it): copied as they are.
    for (let from = this.first; from < this.next; ) {
      const to = Math.min(this.next, (Math.floor(from / this.size) + 1) * this.size);
      this.bytes.copy(bytes, from % size, from % this.size, from % this.size + (to - from));
      from = to;
    }
    [this.bytes, this.size] = [bytes, size];
  }
}
