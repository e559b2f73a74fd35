/**
 * Streams one JSON object and hands out the elements of one of its top-level arrays one at a time,
 * so that a batch of hundreds of megabytes never sits in memory whole. Everything else of the object
 * is kept (with the array left empty) and parsed at the end.
 *
 *   const s = new ArraySplitter('results', (bytes) => ...each element's JSON bytes...);
 *   for await (const chunk of body) s.push(chunk);
 *   const rest = s.end(); // the object without the elements; rest.keys lists top-level keys in order
 */
export class JSONSplitError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

export class ArraySplitter {
  /** Top-level keys in the order they appeared. */
  readonly keys: string[] = [];
  private depth = 0;
  private inString = false;
  private escape = false;
  private expectKey = false;
  private keyParts: Buffer[] | undefined;
  private currentKey = '';
  private inArray = false;
  private element: Buffer[] | undefined;
  private elementStart = -1;
  private elementPrimitive = false;
  private rest: Buffer[] = [];
  private restStart = 0;
  private count = 0;

  constructor(
    private readonly target: string,
    private readonly onElement: (bytes: Buffer, index: number) => void,
    /** Called when the target key is met, with the keys seen before it (to check their order). */
    private readonly onTargetKey?: (keysBefore: string[]) => void,
  ) {}

  get elements(): number {
    return this.count;
  }

  /** Bytes kept now: the element being read, the object around the array, a key. */
  get held(): number {
    let bytes = 0;
    for (const parts of [this.element, this.rest, this.keyParts]) for (const part of parts ?? []) bytes += part.length;
    return bytes;
  }

  // One byte loop on purpose: this is the hot path of 200 MB uploads and results, and a call per
  // state would cost more than the loop itself.
  push(chunk: Buffer): void {
    const n = chunk.length;
    this.restStart = this.inArray ? -1 : 0;
    if (this.element) this.elementStart = 0;
    for (let i = 0; i < n; i++) {
      const b = chunk[i]!;
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (b === BACKSLASH) this.escape = true;
        else if (b === QUOTE) {
          this.inString = false;
          if (this.keyParts) this.finishKey(chunk, i);
          else if (this.elementPrimitive) {
            /* a string element ends at the next , or ] */
          }
        }
        continue;
      }
      if (this.inArray && this.depth === 2 && !this.element) {
        // Between elements of the target array.
        if (isSpace(b) || b === COMMA) continue;
        if (b === RBRACKET) {
          this.inArray = false;
          this.depth = 1;
          this.restStart = i;
          continue;
        }
        this.element = [];
        this.elementStart = i;
        this.elementPrimitive = b !== LBRACE && b !== LBRACKET;
      }
      if (b === QUOTE) {
        this.inString = true;
        if (this.depth === 1 && this.expectKey && !this.inArray) {
          this.keyParts = [];
          this.keyStart = i + 1;
        }
        continue;
      }
      if (b === LBRACE || b === LBRACKET) {
        if (this.depth === 0 && b !== LBRACE) throw new JSONSplitError('expected a JSON object');
        this.depth++;
        if (this.depth === 1) this.expectKey = true;
        if (this.depth === 2 && b === LBRACKET && this.currentKey === this.target && !this.element) {
          this.inArray = true;
          // Keep "[" in the rest so that it parses as an empty array.
          this.rest.push(chunk.subarray(this.restStart, i + 1));
          this.restStart = -1;
        }
        continue;
      }
      if (b === RBRACE || b === RBRACKET) {
        if (this.inArray && this.element && this.elementPrimitive && this.depth === 2) {
          this.closeElement(chunk, i);
          this.inArray = false;
          this.depth = 1;
          this.restStart = i;
          continue;
        }
        this.depth--;
        if (this.depth < 0) throw new JSONSplitError('unbalanced brackets');
        if (this.inArray && this.element && this.depth === 2) this.closeElement(chunk, i + 1);
        continue;
      }
      if (this.inArray && this.element && this.elementPrimitive && this.depth === 2 && (b === COMMA || isSpace(b))) {
        this.closeElement(chunk, i);
        continue;
      }
      if (this.depth === 1 && !this.inArray) {
        if (b === COLON) this.expectKey = false;
        else if (b === COMMA) this.expectKey = true;
      }
    }
    if (this.element && this.elementStart >= 0) this.element.push(Buffer.from(chunk.subarray(this.elementStart)));
    if (this.keyParts) this.keyParts.push(Buffer.from(chunk.subarray(this.keyStart)));
    this.keyStart = 0;
    if (this.restStart >= 0) this.rest.push(Buffer.from(chunk.subarray(this.restStart)));
  }

  private keyStart = 0;

  private finishKey(chunk: Buffer, end: number): void {
    this.keyParts!.push(chunk.subarray(this.keyStart, end));
    const raw = Buffer.concat(this.keyParts!).toString('utf8');
    this.keyParts = undefined;
    const key = JSON.parse(`"${raw}"`) as string;
    this.currentKey = key;
    this.keys.push(key);
    if (key === this.target) this.onTargetKey?.(this.keys.slice(0, -1));
  }

  private closeElement(chunk: Buffer, end: number): void {
    this.element!.push(chunk.subarray(this.elementStart, end));
    const bytes = this.element!.length === 1 ? this.element![0]! : Buffer.concat(this.element!);
    this.element = undefined;
    this.elementStart = -1;
    this.onElement(bytes, this.count++);
  }

  /** The object without the target array's elements. */
  end(): Record<string, unknown> {
    if (this.depth !== 0 || this.inString) throw new JSONSplitError('the JSON text ended early');
    const text = Buffer.concat(this.rest).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new JSONSplitError(`invalid JSON: ${(err as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new JSONSplitError('expected a JSON object');
    return parsed as Record<string, unknown>;
  }
}
