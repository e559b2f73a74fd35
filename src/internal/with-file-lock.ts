import { describeHolder } from './lock-text.js';
import { FileLockTimeout } from './lock-timeout.js';
import { patience } from './lock-patience.js';
import { leftBehind, takeLock } from './file-lock.js';
import { LockTurn } from './lock-turn.js';
import { sleep } from './sleep.js';

const pause = new Int32Array(new SharedArrayBuffer(4));

/** A waiter's state over its tries: its patience with the lock's holder and with a turn ahead of it, the turn, the left-lock watch. */
interface Waiter {
  lock: string;
  turn: LockTurn;
  holder: (lock: string) => boolean;
  turnHolder: (lock: string) => boolean;
  left: ReturnType<typeof leftBehind>;
}

const waiter = (file: string, waitMs: number): Waiter => {
  const lock = `${file}.lock`;
  return { lock, turn: new LockTurn(lock), holder: patience(waitMs), turnHolder: patience(waitMs), left: leftBehind() };
};

/** One try of withFileLock: the lock's release once taken, else undefined (wait and try again). */
function tryTake(file: string, w: Waiter, waitMs: number): (() => void) | undefined {
  const ahead = w.turn.ahead();
  if (ahead) {
    if (w.turnHolder(w.turn.path)) return undefined;
    throw new FileLockTimeout(`cannot change ${file}: ${describeHolder(ahead)} has waited its turn at its lock for ${waitMs / 1000} s without taking it; try again, or remove ${w.turn.path} if no router runs`);
  }
  const taken = takeLock(w.lock);
  if ('release' in taken) {
    w.turn.leave();
    return taken.release;
  }
  w.turn.claim();
  if (w.left(w.lock, taken) || w.holder(w.lock)) return undefined;
  throw new FileLockTimeout(`cannot change ${file}: ${describeHolder({ pid: taken.holder, host: taken.host, elsewhere: taken.elsewhere })} has held its lock for ${waitMs / 1000} s; try again, or remove ${w.lock} if no router runs`);
}

/**
 * Runs `change` holding `<file>.lock`, so that processes that read, change and write the same
 * file (two `router config set` in a script) take turns and none loses the other's change.
 * Synchronous: the changes it guards are. A lock of another machine or pid namespace left for
 * LEFT_MS is taken over (Watch). A waiter of this machine takes the next turn (LockTurn): a writer
 * that takes the lock again after each change lets it in after the change under way.
 */
export function withFileLock<T>(file: string, change: () => T, waitMs = 10_000): T {
  const w = waiter(file, waitMs);
  try {
    for (;;) {
      const release = tryTake(file, w, waitMs);
      if (!release) {
        Atomics.wait(pause, 0, 0, 5);
        continue;
      }
      try {
        return change();
      } finally {
        release();
      }
    }
  } finally {
    w.turn.leave();
  }
}

/** withFileLock with its waits on timers (a library's caller); `change` may be async, and is awaited holding the lock. */
export async function withFileLockAsync<T>(file: string, change: () => T | Promise<T>, waitMs = 10_000): Promise<T> {
  const w = waiter(file, waitMs);
  try {
    for (;;) {
      const release = tryTake(file, w, waitMs);
      if (!release) {
        await sleep(5);
        continue;
      }
      try {
        return await change();
      } finally {
        release();
      }
    }
  } finally {
    w.turn.leave();
  }
}
