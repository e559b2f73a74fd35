/** Words a user understands for the errno codes of files, pipes and sockets. */
import { getSystemErrorMap } from 'node:util';

const WORDS: Record<string, string> = {
  ENOSPC: 'disk full',
  EDQUOT: 'disk quota exceeded',
  EISDIR: 'is a folder',
  ENOTDIR: 'a part of the path is not a folder',
  ENOENT: 'no such file or folder',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'read-only file system',
  EEXIST: 'already exists',
  EBUSY: 'busy',
  EIO: 'input/output error',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  ENAMETOOLONG: 'name too long',
  EXDEV: 'on another file system',
  ELOOP: 'too many symbolic links',
  ETXTBSY: 'busy',
  EPIPE: 'the reader went away',
  EADDRNOTAVAIL: 'address not available on this machine',
  // /dev/tty without a terminal, a device that is not there.
  ENXIO: 'no such device, or no terminal',
  // Refusals of router's own (local-file.ts): what it keeps is read only from a regular file of a bounded size.
  ENOTFILE: 'not a regular file (a device, a FIFO or a socket)',
  EFBIG: 'too large',
};

/**
 * Bad paths the user named: a usage problem (exit 2). The others are failures of the machine (exit 1).
 * ENXIO: a device that is not there, /dev/tty without a terminal (`speak -o /dev/tty` under setsid or nohup).
 */
const PATH_CODES = new Set(['ENOTFILE', 'EFBIG', 'EISDIR', 'ENOTDIR', 'ENOENT', 'EACCES', 'EPERM', 'EROFS', 'EEXIST', 'ENAMETOOLONG', 'ELOOP', 'ENXIO']);

export interface SystemError {
  code: string;
  syscall?: string;
  path?: string;
  /** The second path of a call of two (symlink, link, rename, copyfile): the one made or written. */
  dest?: string;
  /** A file router keeps, by the name a user knows it by (`usage ledger`): said as the named-file rule says (cli/errors.ts). */
  keptAs?: string;
  port?: number;
  address?: string;
  message: string;
}

export function isSystemError(err: unknown): err is SystemError {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code);
}

/** Our words for the code; else the system's own (`ENODEV`: "no such device"); else the code itself. */
export function describeCode(code: string): string {
  const words = WORDS[code];
  if (words) return words;
  for (const [name, text] of getSystemErrorMap().values()) if (name === code) return text;
  return code;
}

export function isPathProblem(code: string): boolean {
  return PATH_CODES.has(code);
}

/** A failed write named by the file it was for (not a temp file, or none): said as "cannot write PATH". */
export function failedWriteOf(err: unknown, path: string): Error {
  return Object.assign(err as Error, { path, syscall: 'write' });
}

/** One line for a system error. */
const TWO_PATHS = new Set(['symlink', 'link', 'rename', 'copyfile']);

export function describeSystemError(err: SystemError): string {
  if (err.code === 'EADDRINUSE') return `${err.port !== undefined ? `port ${err.port}` : 'the port'} is in use: try another --port, or --port 0 for any free one`;
  if (err.code === 'EADDRNOTAVAIL') return `cannot listen on ${err.address ?? 'that address'}: ${describeCode(err.code)}`;
  // A symlink's `path` is its target (a lock's mark: "pid:start@host"), a rename's its temp file: the file
  // made or written is `dest`.
  const target = (err.syscall && TWO_PATHS.has(err.syscall) && err.dest) || err.path;
  // An open for reading says so as syscall 'read' (a plain open is taken to be for writing: outputs are what fail most).
  const verb = err.syscall === 'read' ? 'cannot read' : err.syscall === 'write' || err.syscall === 'open' || err.syscall === 'rename' ? 'cannot write' : 'cannot use';
  return target ? `${verb} ${target}: ${describeCode(err.code)}` : `${describeCode(err.code)} (${err.syscall ?? 'I/O'})`;
}
