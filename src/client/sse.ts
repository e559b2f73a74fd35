import { ProtocolError } from './errors.js';

export interface SSEEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

/** Largest single event we buffer before giving up; guards memory against a runaway line. */
export const MAX_EVENT_BYTES = 64 * 1024 * 1024;

const LINE_END = /\r\n|\r|\n/g;

/**
 * Incremental text/event-stream decoder (WHATWG rules): any of CRLF, LF or CR ends a line,
 * lines starting with ':' are comments (keep-alives), a blank line dispatches the event.
 * Chunk boundaries may fall anywhere, including inside a UTF-8 sequence or a CRLF pair.
 */
export class SSEDecoder {
  /** The bytes of a character the last chunk ended inside of: decoded with the next one's. */
  private carry: Buffer | undefined;
  /** No text decoded yet: a byte order mark that starts it is dropped, as TextDecoder does. */
  private first = true;
  /** The unfinished line, in the pieces it arrived in (joined once it ends: linear in its length). */
  private pending: string[] = [];
  private pendingLength = 0;
  /** The previous chunk ended in CR: a LF starting the next one belongs to it. */
  private pendingCR = false;
  private data: string[] = [];
  private dataLength = 0;
  private event: string | undefined;
  private id: string | undefined;

  push(chunk: Uint8Array | string): SSEEvent[] {
    const s = typeof chunk === 'string' ? chunk : this.decode(chunk, false);
    return this.feed(s, false);
  }

  end(): SSEEvent[] {
    const out = this.feed(this.decode(undefined, true), true);
    const last = this.line('');
    if (last) out.push(last);
    return out;
  }

  /**
   * UTF-8 text of the bytes so far, as TextDecoder's streaming decode gives it (invalid bytes become
   * U+FFFD): the stream is only cut before a byte that starts a character, where decoding each part is
   * decoding the whole. Buffer's decoding, not TextDecoder: its class costs a one-shot chat its load.
   */
  private decode(chunk: Uint8Array | undefined, final: boolean): string {
    let bytes = chunk ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.alloc(0);
    if (this.carry) bytes = Buffer.concat([this.carry, bytes]);
    const end = final ? bytes.length : wholeCharacters(bytes);
    this.carry = end < bytes.length ? Buffer.from(bytes.subarray(end)) : undefined;
    let text = bytes.toString('utf8', 0, end);
    if (this.first && text) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return text;
  }

  private feed(s: string, final: boolean): SSEEvent[] {
    const out: SSEEvent[] = [];
    if (this.pendingCR && s.charCodeAt(0) === 10) s = s.slice(1);
    this.pendingCR = false;
    let start = 0;
    // Only the new text is scanned for line ends; earlier pieces of a long line are never rescanned.
    if (s.indexOf('\r') === -1) {
      // The common case (LF only): a plain indexOf walk, cheaper than the regular expression.
      for (let nl = s.indexOf('\n'); nl !== -1; nl = s.indexOf('\n', start)) {
        const ev = this.line(this.take(s.slice(start, nl)));
        if (ev) out.push(ev);
        start = nl + 1;
      }
    } else {
      LINE_END.lastIndex = 0;
      for (let m = LINE_END.exec(s); m; m = LINE_END.exec(s)) {
        // A CR at the very end may be half of a CRLF split across chunks.
        if (m[0] === '\r' && m.index === s.length - 1 && !final) this.pendingCR = true;
        const ev = this.line(this.take(s.slice(start, m.index)));
        if (ev) out.push(ev);
        start = m.index + m[0].length;
      }
    }
    if (start < s.length) {
      this.pending.push(start === 0 ? s : s.slice(start));
      this.pendingLength += s.length - start;
      if (this.pendingLength > MAX_EVENT_BYTES) throw new ProtocolError('stream line larger than 64 MiB');
    }
    if (final && this.pendingLength > 0) {
      const ev = this.line(this.take(''));
      if (ev) out.push(ev);
    }
    return out;
  }

  /** The unfinished line so far, with `tail` after it; clears it. */
  private take(tail: string): string {
    if (this.pendingLength === 0) return tail;
    const line = this.pending.join('') + tail;
    this.pending = [];
    this.pendingLength = 0;
    return line;
  }

  private line(line: string): SSEEvent | undefined {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = undefined;
        return undefined;
      }
      const out = { event: this.event, data: this.data.length === 1 ? this.data[0]! : this.data.join('\n'), id: this.id };
      this.data = [];
      this.dataLength = 0;
      this.event = undefined;
      return out;
    }
    if (line.charCodeAt(0) === 58 /* : */) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.dataLength += value.length;
      if (this.dataLength > MAX_EVENT_BYTES) throw new ProtocolError('stream event larger than 64 MiB');
      this.data.push(value);
    } else if (field === 'event') this.event = value;
    else if (field === 'id') this.id = value;
    return undefined;
  }
}

/** How many of the bytes end with a whole character: all, unless the last (at most 3) start one that needs more. */
function wholeCharacters(bytes: Buffer): number {
  for (let i = bytes.length - 1; i >= 0 && i >= bytes.length - 3; i--) {
    const b = bytes[i]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: its character starts before it
    const size = b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    return bytes.length - i < size ? i : bytes.length;
  }
  return bytes.length;
}

/** Parses a whole event-stream body into events. */
export async function* parseSSE(body: AsyncIterable<Uint8Array | string, unknown, undefined>): AsyncGenerator<SSEEvent, void, undefined> {
  const decoder = new SSEDecoder();
  for await (const chunk of body) yield* decoder.push(chunk);
  yield* decoder.end();
}

/** A reading of whole events straight from the bytes, tried before the general decoder. */
export interface FastPath<T> {
  /** The item of the event that starts at `start` and ends (blank line included) by `limit`, or undefined. */
  read(buf: Buffer, start: number, limit: number): T | undefined;
  /** Where the event last read ends. */
  readonly end: number;
  /** Every event parsed in full is shown here, to learn the shape it can read. */
  learn(raw: string, parsed: unknown): void;
}

const BLANK_LINE = Buffer.from('\n\n');
const LF = 0x0a;

/**
 * Where the last blank line of buf (from `from` on) starts, or -1. It is most often within the last
 * event, a few hundred bytes from the end: a loop finds it sooner than lastIndexOf's call does.
 */
function lastBlankLine(buf: Buffer, from: number): number {
  for (let i = buf.length - 2; i >= from; i--) if (buf[i + 1] === LF && buf[i] === LF) return i;
  return -1;
}
const CR = 0x0d;
/** The most bytes of an unfinished event held back from the decoder (a larger event ends the byte reading). */
const MAX_HELD = 1024 * 1024;

/**
 * Cuts an event stream at its blank lines and offers each whole event to a FastPath first; the
 * others go to the SSEDecoder, whole, so that it never holds half an event. A stream with CR line
 * ends, or an event larger than MAX_HELD, is left to the decoder from there on.
 */
export class EventSplitter<T> {
  private readonly decoder = new SSEDecoder();
  /** The unfinished event at the end of the last chunk. */
  private held: Buffer | undefined;
  private bytewise: boolean;

  constructor(private readonly fast?: FastPath<T>) {
    this.bytewise = fast !== undefined;
  }

  /** Hands each event of the chunk, in order, to `item` (read fast) or `event`; stops when `event` returns false. */
  push(chunk: Uint8Array, item: (x: T) => void, event: (ev: SSEEvent) => boolean): void {
    // undici hands out Buffers: a view of another array only for other callers.
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const held = this.held;
    this.held = undefined;
    if (!this.bytewise || buf.indexOf(CR) !== -1) return this.toDecoder(held ? Buffer.concat([held, buf]) : buf, event);
    let from = 0;
    if (held) {
      // The event begun in the last chunk: only its end is joined to it, not the whole chunk.
      // (A blank line cut in two is found at the next one: the events up to it are read the same.)
      const blank = buf.indexOf(BLANK_LINE);
      if (blank === -1) {
        this.held = Buffer.concat([held, buf]);
        if (this.held.length > MAX_HELD) this.toDecoder(this.takeHeld(), event);
        return;
      }
      from = blank + 2;
      const joint = Buffer.concat([held, buf.subarray(0, from)]);
      if (!this.walk(joint, 0, joint.length, item, event)) return;
    }
    const last = lastBlankLine(buf, from);
    const whole = last === -1 ? from : last + 2;
    if (!this.walk(buf, from, whole, item, event) || whole === buf.length) return;
    if (buf.length - whole > MAX_HELD) return this.toDecoder(buf.subarray(whole), event);
    this.held = buf.subarray(whole);
  }

  /** Events of buf[at, whole) (whole ends a blank line): each read fast when it can be, else decoded. */
  private walk(buf: Buffer, at: number, whole: number, item: (x: T) => void, event: (ev: SSEEvent) => boolean): boolean {
    while (at < whole) {
      const x = this.fast!.read(buf, at, whole);
      if (x !== undefined) {
        item(x);
        at = this.fast!.end;
        continue;
      }
      const blank = buf.indexOf(BLANK_LINE, at);
      const end = blank === -1 || blank + 2 > whole ? whole : blank + 2;
      for (const ev of this.decoder.push(buf.subarray(at, end))) if (!event(ev)) return false;
      at = end;
    }
    return true;
  }

  private takeHeld(): Buffer {
    const held = this.held!;
    this.held = undefined;
    return held;
  }

  end(event: (ev: SSEEvent) => boolean): void {
    const rest = this.held ? this.decoder.push(this.held) : [];
    this.held = undefined;
    for (const ev of [...rest, ...this.decoder.end()]) if (!event(ev)) return;
  }

  private toDecoder(buf: Buffer, event: (ev: SSEEvent) => boolean): void {
    this.bytewise = false;
    for (const ev of this.decoder.push(buf)) if (!event(ev)) return;
  }
}
