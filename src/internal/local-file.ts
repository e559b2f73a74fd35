/**
 * The files router keeps for itself (roles, profiles, conversations, caches, the REPL's history),
 * read whole with a bound. Opened without waiting (a FIFO no one writes to would hold the command,
 * deaf to Ctrl-C, as a synchronous read cannot be interrupted), and read only when a regular file
 * no larger than `max`: a role or a config that is a link to /dev/zero grew memory at 125 MB/s.
 * The refusals are system errors of their own codes (ENOTFILE, EFBIG), said in words by system-errors.ts.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Far more than any of these files holds. */
export const MAX_LOCAL_FILE_BYTES = 16 * 1024 * 1024;

function refusal(code: 'ENOTFILE' | 'EFBIG', path: string): NodeJS.ErrnoException {
  const what = code === 'EFBIG' ? 'too large' : 'not a regular file';
  return Object.assign(new Error(`${code}: ${what}, read '${path}'`), { code, syscall: 'read', path });
}

/** An open regular file no larger than `max`, for `use`; closed after. */
export function withLocalFile<T>(path: string, max: number, use: (fd: number, size: number) => T): T {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw Object.assign(new Error(`EISDIR: is a folder, read '${path}'`), { code: 'EISDIR', syscall: 'read', path });
    if (!stat.isFile()) throw refusal('ENOTFILE', path);
    if (stat.size > max) throw refusal('EFBIG', path);
    return use(fd, stat.size);
  } finally {
    closeSync(fd);
  }
}

/** A local file's bytes, at most `max` (one that grows past it while read is refused too). */
export function readLocalFile(path: string, max = MAX_LOCAL_FILE_BYTES): Buffer {
  return withLocalFile(path, max, (fd, size) => {
    let buf = Buffer.allocUnsafe(Math.min(max + 1, Math.max(size + 1, 4096)));
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        if (length > max) throw refusal('EFBIG', path);
        const bigger = Buffer.allocUnsafe(Math.min(max + 1, buf.length * 2));
        buf.copy(bigger);
        buf = bigger;
      }
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) return buf.subarray(0, length);
      length += n;
      if (length > max) throw refusal('EFBIG', path);
    }
  });
}

/** The same as UTF-8 text. */
export function readLocalText(path: string, max = MAX_LOCAL_FILE_BYTES): string {
  return readLocalFile(path, max).toString('utf8');
}
