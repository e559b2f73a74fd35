/** The data of one event (its lines joined), or undefined when it has none (a comment, a bare `event:`). */
function dataOf(event: string): string | undefined {
  // Most events are one `data: …` line: no split.
  if (event.startsWith('data: ') && !event.includes('\n')) return event.slice(6);
  const data = event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line[5] === ' ' ? 6 : 5));
  return data.length ? data.join('\n') : undefined;
}

/** Offered an event's payload as bytes (`piece[start..end)`), the read it came in: true when it took it. */
export type EventBytes = (piece: Buffer, start: number, end: number) => boolean;

/** Whether `piece` has `data: ` at `at`. */
const isData = (piece: Buffer, at: number) => piece[at] === 100 && piece[at + 1] === 97 && piece[at + 2] === 116 && piece[at + 3] === 97 && piece[at + 4] === 58 && piece[at + 5] === 32;

/**
 * Splits an event stream into its `data:` payloads as pieces of it arrive, synchronously (comments and
 * other fields are dropped). A character split between two pieces is decoded whole, once its last
 * byte came; a \r\n split between two pieces is one line end. An event still incomplete past
 * `maxEvent` characters throws (a provider that sends one event without end cannot fill the memory).
 */
export class SseSplitter {
  private readonly decoder = new TextDecoder();
  /** The event still incomplete, in the pieces it came in (joined once, when it ends: linear in its size). */
  private parts: string[] = [];
  private size = 0;
  /**
   * A piece ended in \r: a line end at once (an event it ends is given then, not when more comes), and
   * a \n that starts the next piece is its second half, dropped.
   */
  private skipLf = false;
  /** Whether the decoder may hold the first bytes of a character (or a BOM still to drop, before the first piece). */
  private pending = true;

  constructor(private readonly maxEvent = Infinity) {}

  /**
   * Adds a piece; `each` is called with every payload it completes, in order. `bytes`, when given, is
   * offered first each one-line `data: …` event a piece holds whole, as its payload's bytes
   * (`piece[start..end)`): one it takes (true) is not decoded here, nor given to `each`.
   */
  push(piece: Buffer | string, each: (data: string) => void, bytes?: EventBytes): void {
    // Whole characters from the piece's first byte, no event under way, no \r to undo: events found in the bytes.
    if (bytes && typeof piece !== 'string' && !this.size && !this.skipLf && !this.pending && piece.indexOf(13 /* \r */) < 0) return this.pushBytes(piece, each, bytes);
    let text = typeof piece === 'string' ? piece : this.decode(piece);
    if (this.skipLf && text) {
      this.skipLf = false;
      if (text.charCodeAt(0) === 10 /* \n */) text = text.slice(1);
    }
    if (text.includes('\r')) {
      this.skipLf = text.endsWith('\r');
      text = text.replace(/\r\n?/g, '\n');
    }
    let start = 0;
    if (this.size) {
      // The end of the event under way: a blank line split between the pieces, or one in this piece.
      const rest = this.parts[this.parts.length - 1]!;
      const split = rest.endsWith('\n') && text.startsWith('\n');
      const end = split ? 0 : text.indexOf('\n\n');
      if (end < 0) {
        if (text) this.keep(text);
        return;
      }
      const event = split ? this.parts.join('').slice(0, -1) : this.parts.join('') + text.slice(0, end);
      this.parts = [];
      this.size = 0;
      start = split ? 1 : end + 2;
      const data = dataOf(event);
      if (data !== undefined) each(data);
    }
    let end: number;
    while ((end = text.indexOf('\n\n', start)) >= 0) {
      // One `data: …` line (most events): its payload sliced once, not the event and then its payload.
      const data = text.startsWith('data: ', start) && text.indexOf('\n', start) === end ? text.slice(start + 6, end) : dataOf(text.slice(start, end));
      start = end + 2;
      if (data !== undefined) each(data);
    }
    if (start < text.length) this.keep(start ? text.slice(start) : text);
  }

  /**
   * push() of a piece that starts at an event's start in whole characters: its events found as bytes (an
   * event ends at a blank line, an ASCII byte: the bytes before it are whole characters), each offered
   * to `bytes` and decoded only when it is not taken; what is left, the start of an event, decoded as before.
   */
  private pushBytes(piece: Buffer, each: (data: string) => void, bytes: EventBytes): void {
    let start = 0;
    for (;;) {
      let end = piece.indexOf(10 /* \n */, start);
      // One `data: …` line (most events), or an event's end further on.
      const oneLine = end >= 0 && piece[end + 1] === 10;
      while (end >= 0 && piece[end + 1] !== 10) end = piece.indexOf(10, end + 1);
      if (end < 0) break;
      if (oneLine && isData(piece, start)) {
        if (!bytes(piece, start + 6, end)) each(piece.toString('utf8', start + 6, end));
      } else {
        const data = dataOf(piece.toString('utf8', start, end));
        if (data !== undefined) each(data);
      }
      start = end + 2;
    }
    if (start < piece.length) this.keep(this.decode(start ? piece.subarray(start) : piece));
  }

  /**
   * A piece's text. One that ends in an ASCII byte, with nothing pending before it, is whole characters:
   * Buffer's decoder then, at about a third of the streaming TextDecoder's cost per piece.
   */
  private decode(piece: Buffer): string {
    if (!piece.length) return '';
    const ascii = piece[piece.length - 1]! < 0x80;
    if (ascii && !this.pending) return piece.toString('utf8');
    this.pending = !ascii;
    return this.decoder.decode(piece, { stream: true });
  }

  private keep(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size > this.maxEvent) {
      this.parts = [];
      this.size = 0;
      throw new Error(`an event larger than ${this.maxEvent} characters`);
    }
  }
}
