/**
 * Appends whole lines or nothing. A disk that fills up mid-write gives a short write (no error),
 * then ENOSPC on the next: what the short write left is cut off again, so that a later append
 * (once there is room) never glues its line onto a torn one.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';

/**
 * Writes all of `data` to `fd`, open for append, whose size before was `size`. On failure the file
 * is cut back to `size`, unless another writer appended since (then its line is kept; a reader
 * finds the torn line's end at the next record's start).
 */
export function appendAll(fd: number, data: Buffer, size: number): void {
  let written = 0;
  try {
    while (written < data.length) written += writeSync(fd, data, written);
  } catch (err) {
    try {
      if (written && fstatSync(fd).size === size + written) ftruncateSync(fd, size);
    } catch {
      // The failure said is the write's.
    }
    throw err;
  }
}

/**
 * Appends `text` to the file at `path` (made with `mode`) whole, or throws leaving it as it was.
 * A file whose last line is torn (a writer killed or cut off by a full disk before it could cut
 * its part back, a power loss) gets a line end first: the line appended is never glued onto it.
 * `regular`: a file that is not a regular one is refused (ENOTFILE), opened without waiting (a FIFO
 * no one reads would hold the command); /dev/null would take every line and keep none.
 */
export function appendWhole(path: string, text: string, mode = 0o600, regular = false): void {
  const fd = regular ? openRegular(path, mode) : openSync(path, 'a+', mode);
  try {
    const stat = fstatSync(fd);
    if (regular && !stat.isFile()) throw Object.assign(new Error(`ENOTFILE: not a regular file, write '${path}'`), { code: 'ENOTFILE', syscall: 'write', path });
    const torn = stat.isFile() && stat.size > 0 && lastByte(fd, stat.size) !== 0x0a;
    appendAll(fd, Buffer.from(torn ? `\n${text}` : text), stat.size);
  } finally {
    closeSync(fd);
  }
}

/** Opened to append without waiting; a FIFO no one reads (ENXIO) is, as any device, no regular file. */
function openRegular(path: string, mode: number): number {
  try {
    return openSync(path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
    throw Object.assign(new Error(`ENOTFILE: not a regular file, write '${path}'`), { code: 'ENOTFILE', syscall: 'write', path });
  }
}

/** The file's last byte; a line end when it cannot be read (then nothing is added). */
function lastByte(fd: number, size: number): number {
  const b = Buffer.alloc(1);
  try {
    return readSync(fd, b, 0, 1, size - 1) === 1 ? b[0]! : 0x0a;
  } catch {
    return 0x0a;
  }
}
