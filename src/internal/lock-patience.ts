import { lstatSync } from 'node:fs';

/**
 * One holding of a lock: its link's inode and birth time (nanoseconds; its change time where the disk
 * keeps none: withFileLock's locks are never refreshed), which a new link (the lock released and taken
 * again, by any process, even the same one) changes; undefined once it is gone.
 */
function holding(lock: string): string | undefined {
  try {
    const s = lstatSync(lock, { bigint: true });
    return `${s.ino}:${s.birthtimeNs || s.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * For a process waiting on a lock: true while the holding it finds has kept it waiting less than
 * `waitMs`. A wait is measured from the holder's last progress, not from the first look: another
 * writer that keeps taking the lock again (one short change after another) is making progress, and
 * the waiter waits on until it is done rather than timing out while the lock was never held long.
 */
export function patience(waitMs: number): (lock: string) => boolean {
  let seen: string | undefined;
  let until = 0;
  return (lock) => {
    const now = holding(lock);
    if (now === undefined || now !== seen) [seen, until] = [now, Date.now() + waitMs];
    return Date.now() <= until;
  };
}
