import type { KeptGeneration } from './store-api.js';

/** What JSON.stringify escapes in a string: a quote, a backslash, a control character, a surrogate (escaped when lone). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Pieces up to this long are copied character by character (while ASCII), not with a Buffer.write. */
const SHORT = 64;

/** `"name":` for each member name seen, made once: a generation's record has the same ~45 names each time. */
const names = new Map<string, string>();
function nameOf(name: string): string {
  let text = names.get(name);
  if (text === undefined) {
    text = `${JSON.stringify(name)}:`;
    if (names.size < 1024) names.set(name, text);
  }
  return text;
}

/**
 * Generation lines still to be written, as their UTF-8 bytes one after another, each with its newline,
 * and where each starts, by id (in the order they are in). A line is the bytes of
 * `JSON.stringify({ id, workspace, key, data, batch })`, written member by member: the whole line made as
 * one string was built in parts and copied once more, flat, when written (~2.5 KB a line on the young
 * generation, for every answer).
 */
export class PendingLines {
  private bytes: Buffer | undefined;
  /** Bytes used, newlines included. */
  used = 0;
  private readonly starts = new Map<string, number>();
  /** What the last json() gave is a string to be put between quotes. */
  private quote = false;

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
    if (this.starts.has(id)) {
      const line = JSON.stringify({ id, workspace: kept.workspace, key: kept.key, data: kept.data, batch: kept.batch });
      const others = [...this.entries()].filter(([other]) => other !== id);
      this.starts.clear();
      this.used = 0;
      for (const [other, text] of others) this.addLine(other, text);
      return this.addLine(id, line);
    }
    const start = this.used;
    try {
      this.starts.set(id, start);
      this.text('{"id":');
      this.put(this.json(id)!);
      this.member('workspace', kept.workspace);
      this.member('key', kept.key);
      this.data(kept.data);
      this.member('batch', kept.batch);
      this.text('}\n');
    } catch (err) {
      // A record with no JSON (JSON.stringify threw): nothing of it kept.
      this.starts.delete(id);
      this.used = start;
      throw err;
    }
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
    this.text(line);
    this.text('\n');
  }

  /** `,"name":value`, or nothing when the value has no JSON (undefined), as JSON.stringify leaves it out. */
  private member(name: string, value: unknown): void {
    const json = this.json(value);
    if (json === undefined) return;
    this.text(',');
    this.text(nameOf(name));
    this.put(json);
  }

  /** `,"data":{…}`, its members one by one (JSON.stringify's own way for anything but a plain object). */
  private data(data: unknown): void {
    if (data === null || typeof data !== 'object' || Array.isArray(data) || typeof (data as { toJSON?: unknown }).toJSON === 'function') return this.member('data', data);
    this.text(',"data":{');
    let first = true;
    for (const name in data) {
      if (!Object.hasOwn(data, name)) continue;
      const json = this.json((data as Record<string, unknown>)[name]);
      if (json === undefined) continue;
      if (!first) this.text(',');
      first = false;
      this.text(nameOf(name));
      this.put(json);
    }
    this.text('}');
  }

  /**
   * A value's JSON as JSON.stringify writes it (undefined: it has none); `quote` then says whether it is
   * a string to be written between quotes as it is (nothing in it to escape). A string, a number, true,
   * false and null need no JSON.stringify: it made a string of each (from a part of 32 characters).
   */
  private json(value: unknown): string | undefined {
    this.quote = false;
    switch (typeof value) {
      case 'string':
        if (ESCAPED.test(value)) break;
        this.quote = true;
        return value;
      case 'number':
        return Number.isFinite(value) ? String(value) : 'null';
      case 'boolean':
        return value ? 'true' : 'false';
      case 'object':
        if (value === null) return 'null';
    }
    return JSON.stringify(value) as string | undefined;
  }

  /** What json() gave, between quotes when it said so. */
  private put(json: string): void {
    if (!this.quote) return this.text(json);
    this.text('"');
    this.text(json);
    this.text('"');
  }

  private text(text: string): void {
    let bytes = this.bytes;
    // At most 3 bytes a UTF-16 unit: counted only when that may not fit.
    if (!bytes || bytes.length - this.used < 3 * text.length) {
      const need = Buffer.byteLength(text);
      if (!bytes || bytes.length - this.used < need) {
        const grown = Buffer.allocUnsafe(Math.max(this.room, 2 * (this.used + need)));
        bytes?.copy(grown, 0, 0, this.used);
        this.bytes = bytes = grown;
      }
    }
    // A short piece copied here while it is ASCII: a Buffer.write each (~135 a line) took ~12 us a line.
    let at = this.used;
    if (text.length <= SHORT) {
      let i = 0;
      for (; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c >= 0x80) break;
        bytes[at++] = c;
      }
      if (i === text.length) {
        this.used = at;
        return;
      }
      text = text.slice(i);
    }
    this.used = at + bytes.write(text, at);
  }
}
