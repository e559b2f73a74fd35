/**
 * A file a user names to be read (a fragment, an attachment, a flag's file, a requests file): a regular
 * file, or a pipe or a device (`<(cmd)`, /dev/stdin on a pipe) read once as it comes, within the bound
 * its kind has. A named pipe is opened without waiting for its writer and read as a pipe: a blocking
 * open waits in a thread that neither Ctrl-C nor an exit can end.
 */
import { constants, createReadStream, openSync, statSync } from 'node:fs';
import { addAbortSignal, type Readable } from 'node:stream';
import { readLocalFile } from './local-file.js';
import { describeCode } from './system-errors.js';

/** A pipe or a device named as a file: a user's input read once as it comes, never a file of router's. */
export function isPipe(path: string): boolean {
  let st;
  try {
    st = statSync(path, { throwIfNoEntry: false });
  } catch {
    // ENOTDIR, EACCES, a loop: not a pipe; reading the file says what is wrong in the reader's words.
    return false;
  }
  return !!st && (st.isFIFO() || st.isCharacterDevice());
}

/** A file's bytes as they come: a named pipe read as a pipe. */
export async function namedFileStream(path: string, st: { isFIFO(): boolean }, signal?: AbortSignal): Promise<Readable> {
  // node:net is loaded only for a pipe.
  const stream = st.isFIFO() ? new (await import('node:net')).Socket({ fd: openSync(path, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false }) : createReadStream(path);
  return signal ? addAbortSignal(signal, stream) : stream;
}

/** A pipe's or a device's bytes, read once: past `max`, `tooMuch()` (`< /dev/zero` ends there, not in all of memory). */
export async function readPipe(path: string, max: number, tooMuch: () => Error, signal?: AbortSignal): Promise<Buffer> {
  const pieces: Buffer[] = [];
  let size = 0;
  for await (const piece of (await namedFileStream(path, statSync(path), signal)) as AsyncIterable<Buffer>) {
    size += piece.length;
    if (size > max) throw tooMuch();
    pieces.push(piece);
  }
  return Buffer.concat(pieces, size);
}

/** A file a user names, whole: a pipe or a device read once (readPipe), a regular file within `max` as well (a folder: EISDIR). */
export async function readNamedFile(path: string, max: number, tooMuch: () => Error, signal?: AbortSignal): Promise<Buffer> {
  if (isPipe(path)) return readPipe(path, max, tooMuch, signal);
  try {
    return readLocalFile(path, max);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EFBIG') throw tooMuch();
    throw err;
  }
}

/**
 * The one wording of a file a user named that cannot be used, in one line: who named it (a flag, `fragment`,
 * `attachment`, `role file`), the file, what is wrong (`--attach a.png: cannot read it (no such file or folder)`).
 */
export const namedFileLine = (who: string, path: string, what: string): string => `${who} ${path}: ${what}`;

/** What is wrong reading a named file, from the system's code: a folder asks for a file in it; else "cannot read it (why)". */
export const unreadableWhy = (code: string): string => (code === 'EISDIR' ? 'is a folder: name a file in it' : `cannot read it (${describeCode(code)})`);

/** What is wrong reading a file router keeps (config file, usage ledger): a folder in its place is moved away; else "cannot read it (why)". */
export const keptFileWhy = (code: string): string => (code === 'EISDIR' ? 'is a folder: move it away' : `cannot read it (${describeCode(code)})`);
