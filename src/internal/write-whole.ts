import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { makeDir } from './make-dir.js';
import { failedWriteOf } from './system-errors.js';

/**
 * Writes a file whole or not at all: a private temp file beside it, renamed over it, so that a
 * process killed at any instant leaves the old or the new contents. `durable` also flushes the
 * file and its folder to disk. A write that fails (a full disk) removes its temp file and is named
 * by `path`, the file the user knows of. `data` may be a function that writes the contents to the file it is given.
 */
export function writeWhole(path: string, data: string | Uint8Array | ((fd: number) => void), durable = false): void {
  const dir = dirname(path);
  makeDir(dir);
  const temp = join(dir, `.${basename(path)}.${process.pid}`);
  try {
    const fd = openSync(temp, 'w', 0o600);
    try {
      if (typeof data === 'function') data(fd);
      else writeFileSync(fd, data);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw failedWriteOf(err, path);
  }
  if (!durable) return;
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
