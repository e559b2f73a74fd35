import { readSync } from 'node:fs';
import { MAX_LOCAL_FILE_BYTES, withLocalFile } from './local-file.js';

let buffer = Buffer.allocUnsafe(64 * 1024);

/**
 * Reads a file as UTF-8 text through one buffer kept for every call: reading thousands of small
 * files in turn then makes no garbage beyond their text (readFileSync makes a buffer per file,
 * freed only when the collector runs, and the heap swells meanwhile).
 */
export function readTextReusing(path: string, max = MAX_LOCAL_FILE_BYTES): string {
  // A local file of router's: a regular one, read up to `max` (local-file.ts).
  return withLocalFile(path, max, (fd) => {
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > max) throw Object.assign(new Error(`EFBIG: too large, read '${path}'`), { code: 'EFBIG', syscall: 'read', path });
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger);
        buffer = bigger;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) return buffer.toString('utf8', 0, length);
      length += read;
    }
  });
}
