/** Reading all of stdin: as bytes or UTF-8 text, bounded (./bounded-read.ts), a folder given as stdin refused. */
import type { IO } from './io.js';
import { usage } from '../exit-codes.js';
import { utf8Text } from './utf8.js';

/** Node reads a folder given as stdin (`< dir`) as empty: it would pass for no input at all. */
export async function refuseFolderStdin(stream: unknown): Promise<void> {
  if ((stream as { fd?: unknown }).fd === 0 && (await import('node:fs')).fstatSync(0).isDirectory()) {
    throw usage('cannot read stdin: it is a folder');
  }
}

/** Reads all of a stream (stdin) as bytes, up to the bound of any input (src/cli/io/bounded-read.ts). */
export async function readAllBytes(stream: NodeJS.ReadableStream, signal?: AbortSignal): Promise<Buffer> {
  await refuseFolderStdin(stream);
  const { collectBounded } = await import('./bounded-read.js');
  return collectBounded(stream as AsyncIterable<Buffer | string>, 'stdin', signal);
}

/** All of stdin as bytes: a file, device or pipe (`< file`, `echo hi |`) from its descriptor (process.stdin costs a one-shot ~2%), else a stream. */
export async function readStdinBytes(io: IO, signal?: AbortSignal): Promise<Buffer> {
  const fd = io.stdinFd;
  if (fd !== undefined) {
    const { fstatSync, statSync } = await import('node:fs');
    const stat = (of: () => import('node:fs').Stats) => {
      try {
        return of();
      } catch {
        return undefined;
      }
    };
    const st = stat(() => fstatSync(fd));
    if (st?.isDirectory()) throw usage('cannot read stdin: it is a folder');
    if (st && (st.isFile() || st.isCharacterDevice() || st.isFIFO()) && !io.stdinTTY) {
      const devNull = st.isCharacterDevice() && st.rdev === stat(() => statSync('/dev/null'))?.rdev;
      const { MAX_INPUT_BYTES, collectBounded, inputTooLarge, readFdBounded } = await import('./bounded-read.js');
      const read = await readFdBounded(fd, 'stdin', !st.isFile() && !devNull, signal, undefined, st.isFile() ? st.size : 0);
      if (read && !read.more) return read.bytes;
      // A non-blocking pipe with no more yet: the rest as a stream.
      if (read) return Buffer.concat([read.bytes, await collectBounded(io.stdin as AsyncIterable<Buffer>, 'stdin', signal, MAX_INPUT_BYTES - read.bytes.length, () => inputTooLarge('stdin'))]);
    }
  }
  return readAllBytes(io.stdin, signal);
}

/** All of stdin as UTF-8 text, for prompts and keys piped in. */
export async function readStdin(io: IO, signal?: AbortSignal): Promise<string> {
  if (io.noStdin) throw usage(`cannot read stdin: it is turned off (${io.noStdin})`);
  return utf8Text(await readStdinBytes(io, signal), 'stdin');
}

/** Reads all of a stream (stdin) as UTF-8 text, for prompts and keys piped in. */
export async function readAll(stream: NodeJS.ReadableStream, signal?: AbortSignal): Promise<string> {
  return utf8Text(await readAllBytes(stream, signal), 'stdin');
}
