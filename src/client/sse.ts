import { ProtocolError } from './errors.js';

export interface SSEEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

/** Largest single event we buffer before giving up; guards memory against a runaway line. */
export const MAX_EVENT_BYTES = 64 * 1024 * 1024;

/**
 * Parses a text/event-stream body (WHATWG rules): any of CRLF, LF or CR ends a line,
 * lines starting with ':' are comments (keep-alives), a blank line dispatches the event.
 * Chunk boundaries may fall anywhere, including inside a UTF-8 sequence or a CRLF pair.
 */
export async function* parseSSE(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SSEEvent> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let pendingCR = false;
  let data: string[] = [];
  let dataBytes = 0;
  let event: string | undefined;
  let id: string | undefined;

  const takeLine = (line: string): SSEEvent | undefined => {
    if (line === '') {
      if (data.length === 0) {
        event = undefined;
        return undefined;
      }
      const out = { event, data: data.join('\n'), id };
      data = [];
      dataBytes = 0;
      event = undefined;
      return out;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      dataBytes += value.length;
      if (dataBytes > MAX_EVENT_BYTES) throw new ProtocolError('stream event larger than 64 MiB');
      data.push(value);
    } else if (field === 'event') event = value;
    else if (field === 'id') id = value;
    return undefined;
  };

  function* drain(text: string): Generator<SSEEvent> {
    buffer += text;
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const ch = buffer.charCodeAt(i);
      if (ch === 10 /* \n */) {
        if (pendingCR && i === start) {
          pendingCR = false;
          start = i + 1;
          continue;
        }
        pendingCR = false;
        const ev = takeLine(buffer.slice(start, i));
        if (ev) yield ev;
        start = i + 1;
      } else if (ch === 13 /* \r */) {
        const ev = takeLine(buffer.slice(start, i));
        if (ev) yield ev;
        pendingCR = true;
        start = i + 1;
      } else if (pendingCR && i === start) {
        pendingCR = false;
      }
    }
    buffer = buffer.slice(start);
    if (buffer.length > MAX_EVENT_BYTES) throw new ProtocolError('stream line larger than 64 MiB');
  }

  for await (const chunk of body) {
    yield* drain(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
  }
  yield* drain(decoder.decode());
  // A stream that ends without a final blank line still delivers its last event.
  if (buffer !== '') {
    const ev = takeLine(buffer);
    buffer = '';
    if (ev) yield ev;
  }
  const last = takeLine('');
  if (last) yield last;
}
