/**
 * Texts kept as UTF-8 bytes one after another in one buffer used as a ring: each at a position that
 * only grows (its place in the buffer is the position modulo the buffer's size, a text never split
 * at the buffer's end). The buffer doubles rather than write over bytes still wanted (those from the
 * position given to release() on). A kept text is no object on V8's heap: a string kept per request
 * by a store that keeps the newest thousand was copied by every young collection, then promoted.
 *
 * It shrinks again once what is wanted fits a quarter of a smaller size (no smaller than the first):
 * a burst of large texts does not keep its memory for ever. Texts are then placed so that none crosses
 * a boundary of the smaller size, and once every older one is let go the wanted bytes are copied into
 * a buffer of that size at the same positions (a position modulo a size that divides the old one).
 */
export class ByteRing {
  private bytes: Buffer;
  /** The first position still wanted, and the next one to write. */
  private first = 0;
  private next = 0;

  /** A smaller size to move to, and the position from which every text fits its stretches. */
  private shrink: { size: number; from: number } | undefined;
  private readonly least: number;

  constructor(private size = 64 * 1024) {
    this.bytes = Buffer.allocUnsafe(size);
    this.least = size;
  }

  /** The buffer's size in bytes. */
  get capacity(): number {
    return this.size;
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
    this.mayShrink();
  }

  /** Nothing kept is wanted. */
  clear(): void {
    this.first = this.next;
    this.mayShrink();
  }

  private mayShrink(): void {
    const wanted = this.next - this.first;
    if (this.shrink) {
      if (this.first < this.shrink.from) return;
      const { size } = this.shrink;
      this.shrink = undefined;
      if (wanted <= size) this.moveTo(size);
    }
    let size = this.size;
    while (size / 2 >= this.least && wanted * 4 <= size / 2) size /= 2;
    if (size === this.size) return;
    // From a boundary of the smaller size on (the bytes skipped are in the old buffer, within its room), texts fit its stretches.
    this.next = Math.ceil(this.next / size) * size;
    if (!wanted) this.first = this.next;
    this.shrink = { size, from: this.next };
    if (this.first >= this.shrink.from) this.mayShrink();
  }

  /** A smaller buffer holding what is still wanted at the same positions (each text within one of its stretches). */
  private moveTo(size: number): void {
    const bytes = Buffer.allocUnsafe(size);
    for (let from = this.first; from < this.next; ) {
      const to = Math.min(this.next, (Math.floor(from / size) + 1) * size);
      this.bytes.copy(bytes, from % size, from % this.size, from % this.size + (to - from));
      from = to;
    }
    [this.bytes, this.size] = [bytes, size];
  }

  private placed(length: number, write: (at: number) => void): number {
    if (this.shrink) {
      // A text that would not fit the smaller size: no shrink this time. Else it starts where it fits a stretch of it.
      const unit = this.shrink.size;
      if (length > unit) this.shrink = undefined;
      else if ((this.next % unit) + length > unit) this.next += unit - (this.next % unit);
    }
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
    this.shrink = undefined;
  }
}
