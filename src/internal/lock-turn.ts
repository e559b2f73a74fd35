import { holds, linkLock, lockText, readLock, type LockHolder } from './lock-text.js';
import { removeIf } from './lock-mark.js';
import { removeStale } from './file-lock.js';

/**
 * The next turn at a withFileLock lock, `<lock>.next`: a link naming the first process of this machine that
 * found the lock held and waits for it. Another process does not take the lock while one waits its turn, so a
 * writer that takes it again at once after each change (the waiter polls; the writer's next take comes first)
 * lets the waiter in after its current change, instead of keeping it waiting until it stops. The turn is
 * advice beside the lock, never the lock: a turn of this process is not waited for (two callers of one
 * process take the lock as they did: a synchronous one would block the thread its owner runs on), one of
 * another machine or pid namespace cannot be checked and is not waited for either, and one whose process is
 * gone (kill -9 while waiting) is removed as a stale lock is.
 */
export class LockTurn {
  private mine = false;
  private readonly next: string;

  constructor(lock: string) {
    this.next = `${lock}.next`;
  }

  /** The path of the turn, whose holding a waiter blocked by it measures its patience on. */
  get path(): string {
    return this.next;
  }

  /** The live process of this machine whose turn it is, when it is another's: this one does not take the lock now. */
  ahead(): LockHolder | undefined {
    if (this.mine) return undefined;
    const found = readLock(this.next);
    if (!found || found.text === lockText()) return undefined;
    const h = found.holder;
    return h && h.host === undefined && !h.elsewhere && holds(h) ? { pid: h.pid } : undefined;
  }

  /** Called when the lock was found held: takes the next turn if no one has it, or removes one left by a process gone. */
  claim(): void {
    if (this.mine) return;
    try {
      linkLock(this.next);
      this.mine = true;
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return; // no turn then: waits as before
    }
    const found = readLock(this.next);
    if (!found || found.text === lockText()) return;
    const h = found.holder;
    if (h && (h.host !== undefined || h.elsewhere)) return;
    if (!h || !holds(h)) removeStale(this.next, h?.pid ?? 0, found.text);
  }

  /** The lock taken, or the wait given up: the turn is left to the next waiter. */
  leave(): void {
    if (!this.mine) return;
    this.mine = false;
    try {
      removeIf(this.next, lockText());
    } catch {
      // Left for the next waiter to find gone with this process.
    }
  }
}
