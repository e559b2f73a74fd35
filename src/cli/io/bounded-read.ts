import { BATCH_MAX_BYTES } from '../../client/facts.js';
import { usage } from '../exit-codes.js';

/**
 * The most input one call reads: the largest body any request of the service takes (a batch's,
 * 200 MB). Without a bound, `--input /dev/zero` or `< /dev/urandom` would take all memory.
 */
export const MAX_INPUT_BYTES = BATCH_MAX_BYTES;

/** The one line for an input over the bound; `what` names it ("stdin", "--input: big.json"). */
export function inputTooLarge(what: string, max = MAX_INPUT_BYTES): Error {
  return usage(`${what} holds more than ${max / 1_000_000} MB, more than any request of the service takes; nothing was sent`);
}

/**
 * A step of reading input that Ctrl-C ends at once: a pipe no one writes to, a FIFO no one opens,
 * would otherwise keep the command waiting after the interrupt.
 */
async function untilInterrupted<T>(step: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return step;
  signal.throwIfAborted();
  let stop: () => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([step, stopped]);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** The chunks of a source as they come, as Buffers; `tooMuch()` is thrown once they pass `max` bytes. */
export async function* limitBytes(source: AsyncIterable<Buffer | string>, max: number, tooMuch: () => Error): AsyncGenerator<Buffer> {
  let size = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > max) throw tooMuch();
    yield bytes;
  }
}

/** All the chunks of a source, up to `max` bytes; more is refused without being read. */
export async function collectBounded(source: AsyncIterable<Buffer | string>, what: string, signal?: AbortSignal, max = MAX_INPUT_BYTES, tooMuch = () => inputTooLarge(what, max)): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const iterator = limitBytes(source, max, tooMuch);
  try {
    for (;;) {
      const next = await untilInterrupted(iterator.next(), signal);
      if (next.done) break;
      chunks.push(next.value);
    }
  } finally {
    // Stops the source when reading ended early: neither iterator does while a read is pending.
    (source as { destroy?: () => void }).destroy?.();
  }
  return Buffer.concat(chunks);
}

/** What readFdBounded read: all of it, or (`more`) what a non-blocking descriptor had so far, its rest for a stream to read. */
export interface FdRead {
  bytes: Buffer;
  more: boolean;
}

/**
 * All of an open file, device or pipe (stdin given `< file`, `< /dev/null`, `echo hi |`), up to `max`
 * bytes, read without a stream. `blocking`: one that may make a read wait (anything but a file or
 * /dev/null) is read in the thread pool, Ctrl-C ending the wait; the others at once (starting the
 * thread pool costs ~1.5 ms). undefined when the descriptor cannot be read that way (a non-blocking
 * one with nothing yet), and `more` when it had no more yet: the caller reads the rest as a stream.
 */
export async function readFdBounded(fd: number, what: string, blocking: boolean, signal?: AbortSignal, max = MAX_INPUT_BYTES, expected = 0): Promise<FdRead | undefined> {
  const { read, readSync } = await import('node:fs');
  const chunks: Buffer[] = [];
  let size = 0;
  // A file of known size is read into one buffer of that size: chunks joined at the end would hold it twice at once.
  let whole = expected > 0 && expected <= max ? Buffer.allocUnsafe(expected) : undefined;
  for (;;) {
    const buf = whole ?? Buffer.allocUnsafe(64 * 1024);
    const at = whole ? size : 0;
    const room = Math.min(buf.length - at, 1024 * 1024);
    let n: number;
    try {
      n = blocking ? await untilInterrupted(new Promise<number>((resolve, reject) => read(fd, buf, at, room, null, (err, bytes) => (err ? reject(err) : resolve(bytes)))), signal) : readSync(fd, buf, at, room, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      return size === 0 ? undefined : { bytes: whole ? whole.subarray(0, size) : Buffer.concat(chunks), more: true };
    }
    // Read to its known size and no further: that one buffer (Buffer.concat would copy it whole).
    if (n === 0) return { bytes: whole ? whole.subarray(0, size) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), more: false };
    size += n;
    if (size > max) throw inputTooLarge(what, max);
    if (!whole) chunks.push(n === buf.length ? buf : buf.subarray(0, n));
    else if (size === whole.length) {
      // The file grew while it was read: the rest in chunks, after it.
      chunks.push(whole);
      whole = undefined;
    }
  }
}
