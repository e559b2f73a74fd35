import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDir } from '../internal/make-dir.js';

/**
 * Writes `name` in `dir` whole or not at all: a private temp file renamed over it, so a process
 * killed at any instant leaves the old or the new text. `durable` also flushes both to disk
 * (job records, where a lost step costs money; not conversations, on every chat's path).
 */
export function writeAtomic(dir: string, name: string, text: string, durable = false): void {
  makeDir(dir);
  const path = join(dir, name);
  const temp = join(dir, `.${name}.${process.pid}`);
  try {
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeFileSync(fd, text);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    // Named by the file the user knows of, not the temp one (a full disk says where it was full).
    throw Object.assign(err as Error, { path, syscall: 'write' });
  }
  if (!durable) return;
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
