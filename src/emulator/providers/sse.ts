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

/**
 * Splits an event stream into its `data:` payloads as pieces of it arrive, synchronously (comments and
 * other fields are dropped). A character split between two pieces is decoded whole, once its last
 * byte came; a \r\n split between two pieces is one line end.
 */
export class SseSplitter {
  private readonly decoder = new TextDecoder();
  private pending = '';

  /** Adds a piece; `each` is called with every payload it completes, in order. */
  push(piece: Buffer | string, each: (data: string) => void): void {
    let pending = this.pending + (typeof piece === 'string' ? piece : this.decoder.decode(piece, { stream: true }));
    if (pending.includes('\r')) {
      // A \r last may be the first half of a \r\n still to come: kept as it is until then.
      const carry = pending.endsWith('\r') ? '\r' : '';
      pending = pending.slice(0, pending.length - carry.length).replace(/\r\n?/g, '\n') + carry;
    }
    let start = 0;
    let end: number;
    while ((end = pending.indexOf('\n\n', start)) >= 0) {
      const data = dataOf(pending.slice(start, end));
      start = end + 2;
      if (data !== undefined) each(data);
    }
    this.pending = start ? pending.slice(start) : pending;
  }
}

/** The `data:` payloads of an event stream, as they arrive; comments and other fields are dropped. */
export async function* ssePayloads(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const splitter = new SseSplitter();
  const out: string[] = [];
  const take = (data: string) => out.push(data);
  for await (const piece of body) {
    splitter.push(piece, take);
    for (const data of out.splice(0)) yield data;
  }
}
