/** The `data:` payloads of an event stream, as they arrive; comments and other fields are dropped. */
export async function* ssePayloads(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let pending = '';
  for await (const piece of body) {
    pending += typeof piece === 'string' ? piece : piece.toString('utf8');
    pending = pending.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = pending.indexOf('\n\n')) >= 0) {
      const event = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line[5] === ' ' ? 6 : 5));
      if (data.length) yield data.join('\n');
    }
  }
}
