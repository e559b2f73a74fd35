import { lstatSync, readFileSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { processAlive, processStart } from './process.js';
import { onLocalDisk } from './local-volume.js';
import { leftBeforeBoot, noteBoot } from './boot-record.js';

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
 * This boot of this machine: the first 8 digits of Linux's /proc/sys/kernel/random/boot_id, '' where it
 * cannot be read. Two machines with one host name on one network volume are told apart by it. Only 8, so
 * that the lock's text stays short enough to be kept in the link's inode (ext4: under 60 bytes): a
 * longer one takes a block of the disk (a full disk would fail it), and removing it took 2-4 ms, not 0.1.
 */
function bootId(): string {
  try {
    return /^([0-9a-f]{8})-[0-9a-f-]{27}$/.exec(readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim())?.[1] ?? '';
  } catch {
    return '';
  }
}

/**
 * Tests only: a volume to read as shared (two machines), a moment right after a lock's link is made, a
 * moment right before a lock or a mark is removed (removeIf), the clock that says how long ago a link was moved.
 */
export const lockHooks: { shared?: (lock: string) => boolean; afterLink?: (lock: string) => void; beforeRemove?: (path: string) => void; now?: () => number } = {};
let hostForTests: string | undefined;
let bootForTests: string | undefined;
/** Tests only: this machine named `name` in locks from now on (undefined: its own name again). */
export function hostNameForTests(name: string | undefined): void {
  hostForTests = name;
  ownText = undefined;
}
/** Tests only: this machine in its boot `boot` (8 hex digits) from now on, as after a reboot (undefined: its own). */
export function bootIdForTests(boot: string | undefined): void {
  bootForTests = boot;
  ownText = undefined;
}
/** A volume other machines may write at once (a network one, or one statfs cannot name). */
export const sharedVolume = (lock: string) => !!lockHooks.shared?.(lock) || !onLocalDisk(lock);
const host = () => hostForTests ?? hostname();

/**
 * This machine's name in a lock: its host name, or for one over 20 characters (a cloud VM's
 * `ip-10-0-12-34.ec2.internal`, a pod's) its first 11 and a hash of the whole (`~` and 8 hex digits,
 * FNV-1a), so that the text stays in the link's inode (bootId). Routers before it wrote the whole name.
 */
export function lockHost(name = host()): string {
  if (name.length <= 20) return name;
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return `${name.slice(0, 11)}~${(hash >>> 0).toString(16).padStart(8, '0')}`;
}

/** True when a lock's HOST is this machine's: as written now, or whole (a router before lockHost). */
const thisHost = (name: string) => name === lockHost() || name === host();

/**
 * A lock's text, `PID[:START]@HOST[+BOOT][#SPACE]`: the process that holds it, when it started
 * (processStart()), the machine it runs on, that machine's boot and its pid namespace. A pid is known
 * only in its namespace (two containers on one volume, each one's serve pid 1), on its machine and
 * boot, and may since be another process's (a restarted container's serve is pid 1 again). A lock with
 * a SPACE is refreshed by a holder that keeps it (holdLock): from another machine or namespace, that
 * is how it is told alive. BOOT goes with the host name: a router that knows no BOOT reads HOST+BOOT
 * as another machine's name, so it holds such a lock rather than check its pid.
 */
let ownText: string | undefined;
let ownSpace: string | undefined;
let ownBoot: string | undefined;
/** Makes `lock`, a link to lockText() (throws as symlinkSync does when it exists). */
export function linkLock(lock: string): void {
  const text = lockText();
  noteBoot(ownBoot!, () => sharedVolume(lock));
  symlinkSync(text, lock);
  lockHooks.afterLink?.(lock);
}

export function lockText(): string {
  if (ownText === undefined) {
    const start = processStart(process.pid);
    ownSpace = pidSpace();
    ownBoot = bootForTests ?? bootId();
    ownText = `${process.pid}${start ? `:${start}` : ''}@${lockHost()}${ownBoot ? `+${ownBoot}` : ''}${ownSpace ? `#${ownSpace}` : ''}`;
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

/** `rebooted`: the lock's holder ran on this machine before its last boot (gone). */
export type Found = LockHolder & { start?: string; space?: string; rebooted?: boolean };

/** The lock's text (undefined once it is gone), and the holder it names (undefined: not a lock of ours). */
export function readLock(lock: string): { text: string; holder?: Found } | undefined {
  let text: string;
  try {
    text = readlinkSync(lock);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : { text: '' };
  }
  const m = /^(\d+)(?::(\d+))?(?:@([^#]+?)(?:\+([0-9a-f]{8}))?(?:#(\d+))?)?$/.exec(text);
  if (!m || !Number(m[1])) return { text };
  lockText();
  // Another boot of a machine of this name: another machine, or this one rebooted; its pid is not ours to check either way.
  const otherBoot = m[3] !== undefined && thisHost(m[3]) && !!m[4] && !!ownBoot && m[4] !== ownBoot;
  // On a disk only this machine mounts, or of a boot this machine listed (boot-record.ts), it is this machine before a reboot: its holder is gone.
  if (otherBoot && (!sharedVolume(lock) || leftBeforeBoot(lock, m[4]!))) return { text, holder: { pid: Number(m[1]), start: m[2], rebooted: true } };
  const host = otherBoot ? `${m[3]} (another boot)` : m[3] === undefined || thisHost(m[3]) ? undefined : m[3];
  const elsewhere = host === undefined && m[5] !== undefined && !!ownSpace && m[5] !== ownSpace ? true : undefined;
  return { text, holder: { pid: Number(m[1]), start: m[2], host, elsewhere, space: m[5] } };
}

/** A holder that still holds: on another machine or namespace (cannot be told), or this one's process, started when the lock says. */
export function holds(h: Found): boolean {
  if (h.rebooted) return false;
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
