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

/** The `data:` payloads of an event stream, as they arrive; comments and other fields are dropped. */
export async function* ssePayloads(body: AsyncIterable<Buffer | string>, maxEvent = Infinity): AsyncGenerator<string> {
  // A character split between two reads is decoded whole, once its last byte came.
  const decoder = new TextDecoder();
  let pending = '';
  for await (const piece of body) {
    pending += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
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
      if (data !== undefined) yield data;
    }
    pending = start ? pending.slice(start) : pending;
    if (pending.length > maxEvent) throw new Error(`an event larger than ${maxEvent} characters`);
  }
}
