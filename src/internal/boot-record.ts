import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { uptime } from 'node:os';
import { onLocalDisk } from './local-volume.js';

/**
 * The boots of this machine in which a router made a lock on a volume other machines may share (NFS, or
 * one statfs cannot name): the first 8 digits of each boot id, one a line, in a file on this machine's own
 * disk that outlives a reboot (/var/tmp), one per user, trusted only while it is that user's and written by
 * no one else. A lock of this host name and another boot is this machine's before a reboot (its holder
 * gone) when that boot is listed here: only this kernel writes this file, and a boot id is random, so
 * another machine of this host name (a clone of this one, a container of the same image on another
 * host, whose /etc/machine-id may be this one's) never had it. A boot not listed (another user's router,
 * a container restarted with a fresh /var/tmp) is another machine's, watched as before. A clone of this
 * machine's disk made while it ran lists its boot of then, which may still run: so the lock must also be
 * last refreshed before this boot began (leftBeforeBoot); another machine's, refreshed every 2 s, is not,
 * unless its clock is behind this one's by more than this one has been up.
 */
export const bootRecord: { file?: string } = {};

function recordFile(): string | undefined {
  const uid = process.getuid?.();
  const file = bootRecord.file ?? (uid === undefined ? undefined : `/var/tmp/router-boots-${uid}`);
  return file && onLocalDisk(file) ? file : undefined;
}

/** A file of this user's that no one else may write. */
const own = (s: { uid: number; mode: number }) => s.uid === process.getuid?.() && (s.mode & 0o022) === 0;

/** Past this a record is not read (a line a boot: 9 bytes, so some 7,000 boots): a file grown otherwise is not one to load. */
const RECORD_MAX = 64 * 1024;

/** The boots listed (undefined: no record to trust). */
function listed(file: string): string[] | undefined {
  try {
    const s = lstatSync(file);
    return s.isFile() && own(s) && s.size <= RECORD_MAX ? readFileSync(file, 'latin1').split('\n') : undefined;
  } catch {
    return undefined;
  }
}

let noted: string | undefined;
/**
 * Lists `boot` (once a process), before a lock is made on a shared volume (`shared`), so that a lock a crash
 * leaves is known for this machine's after a reboot. Opened without following a link and checked as this
 * user's: a file another user made in its place is left alone (the locks are watched as before).
 */
export function noteBoot(boot: string, shared: () => boolean): void {
  if (!boot || noted === boot || !shared()) return;
  noted = boot;
  const file = recordFile();
  if (!file || listed(file)?.includes(boot)) return;
  try {
    const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    try {
      const s = fstatSync(fd);
      if (own(s) && s.size <= RECORD_MAX) writeSync(fd, `${boot}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not written (no /var/tmp, a read-only root): such a lock is watched after a reboot, as before.
  }
}

/**
 * True when `lock`, made in `boot`, is this machine's from before this boot: `boot` is listed, and the lock
 * was last refreshed (its link's mtime) before this boot began.
 */
export function leftBeforeBoot(lock: string, boot: string): boolean {
  const file = recordFile();
  if (!file || !listed(file)?.includes(boot)) return false;
  try {
    return lstatSync(lock).mtimeMs < Date.now() - uptime() * 1000;
  } catch {
    return false;
  }
}
