import { closeSync, openSync, readSync } from 'node:fs';

/** The line that starts at byte `at` of `path` (to its newline or the file's end); undefined when the file is gone. */
export function lineAt(path: string, at: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    let buf = Buffer.allocUnsafe(4096);
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, at + got);
      const nl = buf.subarray(got, got + n).indexOf(10);
      if (nl >= 0) return buf.toString('utf8', 0, got + nl);
      got += n;
      if (n === 0) return buf.toString('utf8', 0, got);
      if (got === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
    }
  } finally {
    closeSync(fd);
  }
}
