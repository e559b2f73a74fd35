import { lstatSync, readlinkSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { processAlive, processStart } from './process.js';

// A lock of file-lock.ts as a file: the link's text (who holds it), read, refreshed times, removed.

/**
 * This process's pid namespace (Linux: the number /proc/self/ns/pid names), '' where it cannot be read.
 * Containers that share a host name (`--network host`, a `hostname:` set alike) do not share pids.
 */
function pidSpace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '';
  } catch {
    return '';
  }
}

/**
 * A lock's text, `PID[:START]@HOST[#SPACE]`: the process that holds it, when it started
 * (processStart()), the machine it runs on and its pid namespace. A pid is known only in its
 * namespace (two containers on one volume, each one's serve pid 1), and may since be another
 * process's (a restarted container's serve is pid 1 again). A lock with a SPACE is refreshed by a
 * holder that keeps it (holdLock): from another machine or namespace, that is how it is told alive.
 */
let ownText: string | undefined;
let ownSpace: string | undefined;
export function lockText(): string {
  if (ownText === undefined) {
    const start = processStart(process.pid);
    ownSpace = pidSpace();
    ownText = `${process.pid}${start ? `:${start}` : ''}@${hostname()}${ownSpace ? `#${ownSpace}` : ''}`;
  }
  return ownText;
}

/** Who holds a lock, as its text says; a lock of an older router names only a pid (of this machine). */
export interface LockHolder {
  pid: number;
  /** Set when the holder runs on another machine: it cannot be checked from here. */
  host?: string;
  /** Set when the holder runs in another pid namespace of this machine (another container): its pid is not ours to check. */
  elsewhere?: boolean;
}

/** "process PID", with its machine or namespace when that is another. */
export const describeHolder = (h: LockHolder) => `process ${h.pid}${h.host ? ` on ${h.host}` : h.elsewhere ? ' of another process namespace' : ''}`;

export type Found = LockHolder & { start?: string; space?: string };

/** The lock's text (undefined once it is gone), and the holder it names (undefined: not a lock of ours). */
export function readLock(lock: string): { text: string; holder?: Found } | undefined {
  let text: string;
  try {
    text = readlinkSync(lock);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : { text: '' };
  }
  const m = /^(\d+)(?::(\d+))?(?:@([^#]+)(?:#(\d+))?)?$/.exec(text);
  if (!m || !Number(m[1])) return { text };
  lockText();
  const host = m[3] === undefined || m[3] === hostname() ? undefined : m[3];
  const elsewhere = host === undefined && m[4] !== undefined && !!ownSpace && m[4] !== ownSpace ? true : undefined;
  return { text, holder: { pid: Number(m[1]), start: m[2], host, elsewhere, space: m[4] } };
}

/** A holder that still holds: on another machine or namespace (cannot be told), or this one's process, started when the lock says. */
export function holds(h: Found): boolean {
  if (h.host !== undefined || h.elsewhere) return true;
  if (!processAlive(h.pid)) return false;
  const now = h.start === undefined ? undefined : processStart(h.pid);
  return now === undefined || now === h.start;
}

/** Removes a lock link, if still there: unlink, as rmSync would load its folder remover (~0.5 ms of a start). */
export function removeLink(lock: string): void {
  try {
    unlinkSync(lock);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** When the lock was last refreshed (its link's mtime), and what it says; undefined once it is gone. */
export function touched(lock: string): { text: string; at: number } | undefined {
  try {
    return { text: readlinkSync(lock), at: lstatSync(lock).mtimeMs };
  } catch {
    return undefined;
  }
}

/** Removes `lock` if it still names this process: one taken over since (its holder here not heard for a while) is the taker's. */
export function releaseOwn(lock: string): void {
  try {
    if (readlinkSync(lock) !== lockText()) return;
  } catch {
    return;
  }
  removeLink(lock);
}
