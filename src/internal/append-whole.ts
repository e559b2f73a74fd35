/**
 * Appends whole lines or nothing. A disk that fills up mid-write gives a short write (no error),
 * then ENOSPC on the next: what the short write left is cut off again, so that a later append
 * (once there is room) never glues its line onto a torn one.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';

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

/** Appends `text` to the file at `path` (made with `mode`) whole, or throws leaving it as it was. */
export function appendWhole(path: string, text: string, mode = 0o600): void {
  const fd = openSync(path, 'a', mode);
  try {
    appendAll(fd, Buffer.from(text), fstatSync(fd).size);
  } finally {
    closeSync(fd);
  }
}
