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
  // A file of known size is read into one buffer of that size; anything else into a first MiB, then into
  // room for all the bound allows: joined chunks held a 50 MB pipe twice at once (see roomFor).
  const sized = expected > 0 && expected <= max;
  let buf: Buffer = Buffer.allocUnsafe(sized ? expected : Math.min(FIRST_ROOM, max + 1));
  // A file that grew while it was read: the buffer of its known size, the rest after it.
  let grewFrom: Buffer | undefined;
  let at = 0;
  // Read to its known size and no further: that one buffer (Buffer.concat would copy it whole).
  const bytes = () => (!grewFrom ? buf.subarray(0, at) : at === 0 ? grewFrom : Buffer.concat([grewFrom, buf.subarray(0, at)]));
  for (;;) {
    if (at === buf.length) {
      if (sized && !grewFrom) [grewFrom, buf, at] = [buf, Buffer.allocUnsafe(Math.min(FIRST_ROOM, max + 1 - buf.length)), 0];
      else buf = roomFor(buf, max + 1 - (grewFrom?.length ?? 0));
    }
    const room = Math.min(buf.length - at, 1024 * 1024);
    let n: number;
    try {
      n = blocking ? await untilInterrupted(new Promise<number>((resolve, reject) => read(fd, buf, at, room, null, (err, got) => (err ? reject(err) : resolve(got)))), signal) : readSync(fd, buf, at, room, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      return at === 0 && !grewFrom ? undefined : { bytes: bytes(), more: true };
    }
    if (n === 0) return { bytes: bytes(), more: false };
    at += n;
    if (at + (grewFrom?.length ?? 0) > max) throw inputTooLarge(what, max);
  }
}

/** The first buffer of input of unknown size: a prompt piped in mostly fits. */
const FIRST_ROOM = 1024 * 1024;

/**
 * A full buffer's bytes moved into room for `most` bytes, the bound: memory only where bytes are
 * written (the system gives a large allocation's pages as they are first touched), so a 50 MB pipe
 * costs 50 MB, read once and copied never after its first MiB.
 */
function roomFor(full: Buffer, most: number): Buffer {
  const room = Buffer.allocUnsafe(Math.max(most, full.length + 1));
  full.copy(room);
  return room;
}
