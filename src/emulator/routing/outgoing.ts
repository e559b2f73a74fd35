import type { RelayedTokens } from './hang-up.js';

/**
 * What is still to be written to the caller, as its UTF-8 bytes: the events of one network read go out
 * in one write (`take`), their tokens then sent. Each frame's text is written into the bytes as it is
 * made, in the pieces it is made of: frames joined into one string were copied once more, whole and
 * flat, when written (~7 KB a stream's, on the young generation), and each join left a node behind.
 */
export class Outgoing {
  private bytes: Buffer | undefined;
  /** Where in `bytes` what was added since the last take starts, and where it ends (the room after it is written to next). */
  private start = 0;
  private used = 0;

  constructor(
    first: string,
    private readonly tokens: RelayedTokens,
  ) {
    this.add(first);
  }

  /** Adds text to what is to be written. */
  readonly add = (text: string): void => {
    let bytes = this.bytes;
    // At most 3 bytes a UTF-16 unit: counted only when that may not fit.
    if (!bytes || bytes.length - this.used < 3 * text.length) bytes = this.room(Buffer.byteLength(text));
    this.used += bytes.write(text, this.used);
  };

  /** Adds `from[start..end)`, bytes already UTF-8 (a slice of a network read, a frame's fixed ends): copied, not decoded and encoded again. */
  readonly addBytes = (from: Buffer, start: number, end: number): void => {
    const bytes = this.room(end - start);
    this.used += from.copy(bytes, this.used, start, end);
  };

  /** What was added since the last take, its tokens now sent (undefined: nothing). */
  readonly take = (): Buffer | undefined => {
    this.tokens.written();
    return this.rest();
  };

  /** What was added since the last take (undefined: nothing), to end the stream with. */
  rest(): Buffer | undefined {
    const bytes = this.bytes;
    if (!bytes || this.used === this.start) return undefined;
    const ready = bytes.subarray(this.start, this.used);
    // The room after it is written to next: the bytes given out are never touched again. Kept as an
    // offset, not as a view of its own: one Buffer less made a write.
    if (bytes.length - this.used >= 512) this.start = this.used;
    else {
      this.bytes = undefined;
      this.start = this.used = 0;
    }
    return ready;
  }

  /** Bytes with room for `need` more after those added. */
  private room(need: number): Buffer {
    const bytes = this.bytes;
    if (bytes && bytes.length - this.used >= need) return bytes;
    // Under 4 KB, a slice of node's shared pool: no allocation of its own.
    const added = this.used - this.start;
    const grown = Buffer.allocUnsafe(Math.max(2048, 2 * (added + need)));
    if (added) bytes!.copy(grown, 0, this.start, this.used);
    this.start = 0;
    this.used = added;
    return (this.bytes = grown);
  }
}
