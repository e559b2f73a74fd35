import { closeSync, openSync, readSync } from 'node:fs';

let buffer = Buffer.allocUnsafe(64 * 1024);

/**
 * Reads a file as UTF-8 text through one buffer kept for every call: reading thousands of small
 * files in turn then makes no garbage beyond their text (readFileSync makes a buffer per file,
 * freed only when the collector runs, and the heap swells meanwhile).
 */
export function readTextReusing(path: string): string {
  const fd = openSync(path, 'r');
  try {
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger);
        buffer = bigger;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) return buffer.toString('utf8', 0, length);
      length += read;
    }
  } finally {
    closeSync(fd);
  }
}
