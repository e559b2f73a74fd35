import type { KeptGeneration } from './store-api.js';

/**
 * Generation lines still to be written, as their UTF-8 bytes one after another, each with its newline,
 * and where each starts, by id (in the order they are in). A line is `JSON.stringify({ id, workspace,
 * key, data, batch })`, written into the bytes at once: made member by member in JS instead (fewer
 * bytes on the young generation), it cost ~3x the instructions (~120 K a record, callgrind), more CPU
 * than the young collections the string costs.
 */
export class PendingLines {
  private bytes: Buffer | undefined;
  /** Bytes used, newlines included. */
  used = 0;
  private readonly starts = new Map<string, number>();

  /** `room`: the bytes to begin with (the size of the lines the last turn had). */
  constructor(private readonly room = 2048) {}

  get size(): number {
    return this.starts.size;
  }

  has(id: string): boolean {
    return this.starts.has(id);
  }

  /** Adds `id`'s line; one it had already is replaced (the line is then last, as a Map's re-set key is not). */
  add(id: string, kept: KeptGeneration): void {
    // A record with no JSON (JSON.stringify threw): nothing of it kept.
    const line = JSON.stringify({ id, workspace: kept.workspace, key: kept.key, data: kept.data, batch: kept.batch });
    if (this.starts.has(id)) {
      const others = [...this.entries()].filter(([other]) => other !== id);
      this.starts.clear();
      this.used = 0;
      for (const [other, text] of others) this.addLine(other, text);
    }
    this.addLine(id, line);
  }

  /** `id`'s line (without its newline), undefined when it has none. */
  get(id: string): string | undefined {
    const start = this.starts.get(id);
    if (start === undefined) return undefined;
    return this.bytes!.toString('utf8', start, this.bytes!.indexOf(10, start));
  }

  /** Each id and its line, in order. */
  *entries(): IterableIterator<[string, string]> {
    for (const id of this.starts.keys()) yield [id, this.get(id)!];
  }

  ids(): IterableIterator<string> {
    return this.starts.keys();
  }

  /** The lines' bytes (after a newline first when `torn`), and where each starts in them, in order. */
  take(torn: boolean): { bytes: Buffer; used: number; starts: number[] } {
    const bytes = this.bytes ?? Buffer.alloc(0);
    const shift = torn ? 1 : 0;
    const starts = [...this.starts.values()].map((at) => at + shift);
    if (!torn) return { bytes, used: this.used, starts };
    const out = Buffer.allocUnsafe(this.used + 1);
    out[0] = 0x0a;
    bytes.copy(out, 1, 0, this.used);
    return { bytes: out, used: this.used + 1, starts };
  }

  /** Adds `id`'s line as made before (without its newline). */
  addLine(id: string, line: string): void {
    this.starts.set(id, this.used);
    let bytes = this.bytes;
    // At most 3 bytes a UTF-16 unit, and the newline: counted only when that may not fit.
    if (!bytes || bytes.length - this.used < 3 * line.length + 1) {
      const need = Buffer.byteLength(line) + 1;
      if (!bytes || bytes.length - this.used < need) {
        const grown = Buffer.allocUnsafe(Math.max(this.room, 2 * (this.used + need)));
        bytes?.copy(grown, 0, 0, this.used);
        this.bytes = bytes = grown;
      }
    }
    this.used += bytes.write(line, this.used);
    bytes[this.used++] = 0x0a;
  }
}
