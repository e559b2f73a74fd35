import type { IncomingHttpHeaders } from 'node:http';
import { isSecretHeader } from '../../internal/secret-headers.js';
import { ByteRing } from '../state/byte-ring.js';
import { LOG_BODY_BYTES, LoggedRequest } from './logged-request.js';

/** The request log keeps at most this many bytes of bodies. */
const LOG_BYTES = 16 * 1024 * 1024;

/** The query of a request that has none: one object for all of them. */
const NO_QUERY: Record<string, string[]> = Object.freeze({}) as Record<string, string[]>;

const enum Body {
  None,
  Kept,
  Truncated,
}

/**
 * The request log: the newest `limit` requests (fewer once their bodies pass LOG_BYTES), oldest first.
 * Kept in slots of arrays made once, written in turn, the headers and bodies as bytes in one ring
 * (byte-ring.ts), parsed only when the log is read (`entries()`): an object, a headers string and a
 * body string kept per request for two seconds at 500/s were what every young collection copied, then
 * promoted. The method, path and workspace are the strings node, the path table and the key already keep.
 */
export class RequestLog {
  private readonly bytes = new ByteRing();
  /** Each entry's number (counted from 1, never reused): a request in flight finds its entry by it. */
  private readonly numbers: Float64Array;
  private readonly methods: string[];
  private readonly paths: string[];
  private readonly queries: (Record<string, string[]> | undefined)[];
  private readonly workspaces: (string | undefined)[];
  private readonly times: Float64Array;
  private readonly headersAt: Float64Array;
  private readonly headersLength: Int32Array;
  private readonly bodies: Uint8Array;
  private readonly bodyAt: Float64Array;
  private readonly bodyLength: Int32Array;
  /** A kept body's bytes; a truncated one's size as it came. */
  private readonly bodySize: Float64Array;
  /** The slot of the oldest entry, and how many there are. */
  private first = 0;
  private count = 0;
  private numbered = 0;
  /** Bytes of the bodies kept. */
  private bodyBytes = 0;

  constructor(private readonly limit = 1000) {
    const slots = <T>(): T[] => new Array<T>(limit).fill(undefined as T);
    [this.methods, this.paths, this.queries, this.workspaces] = [slots(), slots(), slots(), slots()];
    [this.numbers, this.times, this.headersAt, this.bodyAt, this.bodySize] = [0, 0, 0, 0, 0].map(() => new Float64Array(limit));
    [this.headersLength, this.bodyLength] = [new Int32Array(limit), new Int32Array(limit)];
    this.bodies = new Uint8Array(limit);
  }

  get length(): number {
    return this.count;
  }

  /** Logs a request as it comes: its headers less those carrying credentials (and any sent more than once). */
  add(method: string, path: string, query: Record<string, string[]> | undefined, headers: IncomingHttpHeaders, at: number): LogEntry {
    // Bounded by count and by the bytes of the bodies kept.
    while (this.count > 0 && (this.count >= this.limit || this.bodyBytes > LOG_BYTES)) this.dropOldest();
    let shown = '';
    for (const k in headers) {
      const v = headers[k];
      if (typeof v === 'string' && !isSecretHeader(k)) shown = shown ? `${shown}\n${k}\n${v}` : `${k}\n${v}`;
    }
    const i = (this.first + this.count++) % this.limit;
    const length = Buffer.byteLength(shown);
    [this.headersAt[i], this.headersLength[i]] = [this.bytes.put(shown, length), length];
    [this.methods[i], this.paths[i], this.queries[i], this.workspaces[i], this.times[i], this.bodies[i]] = [method, path, query, undefined, at, Body.None];
    this.numbers[i] = ++this.numbered;
    return new LogEntry(this, this.numbered, i);
  }

  /** Every entry, oldest first, as its readers get it. */
  entries(): LoggedRequest[] {
    const out: LoggedRequest[] = [];
    for (let k = 0; k < this.count; k++) {
      const i = (this.first + k) % this.limit;
      const body = this.bodies[i] === Body.Kept ? { text: this.bytes.text(this.bodyAt[i]!, this.bodyLength[i]!) } : { value: this.bodies[i] === Body.Truncated ? { truncated: true, bytes: this.bodySize[i] } : undefined };
      const bodyBytes = this.bodies[i] === Body.None ? undefined : Math.min(this.bodySize[i]!, LOG_BODY_BYTES);
      out.push(new LoggedRequest(this.methods[i]!, this.paths[i]!, this.queries[i] ?? NO_QUERY, this.bytes.text(this.headersAt[i]!, this.headersLength[i]!), body, this.times[i]!, this.workspaces[i], bodyBytes));
    }
    return out;
  }

  /** Lets go of every entry `drop` is true of (by its workspace), the others kept in order. */
  remove(drop: (workspace: string | undefined) => boolean): void {
    let kept = 0;
    for (let k = 0; k < this.count; k++) {
      const from = (this.first + k) % this.limit;
      if (drop(this.workspaces[from])) {
        this.let(from);
        continue;
      }
      const to = (this.first + kept++) % this.limit;
      if (to !== from) this.move(from, to);
    }
    for (let k = kept; k < this.count; k++) this.clearSlot((this.first + k) % this.limit);
    this.count = kept;
    if (kept) this.bytes.release(this.headersAt[this.first]!);
    else this.bytes.clear();
  }

  /** The slot of entry `n`: `hint` unless entries moved since (remove()); -1 once it is let go. */
  slotOf(n: number, hint: number): number {
    if (this.numbers[hint] === n) return hint;
    for (let k = 0; k < this.count; k++) if (this.numbers[(this.first + k) % this.limit] === n) return (this.first + k) % this.limit;
    return -1;
  }

  setWorkspace(slot: number, workspace: string): void {
    this.workspaces[slot] = workspace;
  }

  /** Records a body as it came (`raw`, `size` bytes): whole up to LOG_BODY_BYTES, else by its size. */
  keepBody(slot: number, raw: Uint8Array | undefined, size: number): void {
    if (this.bodies[slot] !== Body.None) this.bodyBytes -= Math.min(this.bodySize[slot]!, LOG_BODY_BYTES);
    if (size <= LOG_BODY_BYTES && raw) {
      [this.bodies[slot], this.bodyAt[slot], this.bodyLength[slot]] = [Body.Kept, this.bytes.putBytes(raw), raw.length];
    } else this.bodies[slot] = Body.Truncated;
    this.bodySize[slot] = size;
    this.bodyBytes += Math.min(size, LOG_BODY_BYTES);
  }

  private dropOldest(): void {
    this.let(this.first);
    this.clearSlot(this.first);
    this.first = (this.first + 1) % this.limit;
    this.count--;
    if (this.count) this.bytes.release(this.headersAt[this.first]!);
    else this.bytes.clear();
  }

  /** The entry in `slot` no longer counts among the bodies kept. */
  private let(slot: number): void {
    if (this.bodies[slot] !== Body.None) this.bodyBytes -= Math.min(this.bodySize[slot]!, LOG_BODY_BYTES);
  }

  private clearSlot(i: number): void {
    [this.methods[i], this.paths[i], this.queries[i], this.workspaces[i], this.numbers[i], this.bodies[i]] = [undefined!, undefined!, undefined, undefined, 0, Body.None];
  }

  private move(from: number, to: number): void {
    for (const a of [this.methods, this.paths, this.queries, this.workspaces] as unknown[][]) a[to] = a[from];
    for (const a of [this.numbers, this.times, this.headersAt, this.headersLength, this.bodies, this.bodyAt, this.bodyLength, this.bodySize]) a[to] = a[from]!;
  }
}

/** A request's own entry in the log while it is handled (found by its number: the log may let it go meanwhile). */
export class LogEntry {
  constructor(
    private readonly log: RequestLog,
    private readonly n: number,
    private slot: number,
  ) {}

  /** The caller's workspace, once its key was accepted. */
  set workspace(workspace: string) {
    if ((this.slot = this.log.slotOf(this.n, this.slot)) >= 0) this.log.setWorkspace(this.slot, workspace);
  }

  /** Records the body: `raw` its bytes as they came (kept up to LOG_BODY_BYTES, parsed when read), `size` how many came. */
  keepBody(raw: Uint8Array | undefined, size: number): void {
    if ((this.slot = this.log.slotOf(this.n, this.slot)) >= 0) this.log.keepBody(this.slot, raw, size);
  }
}
