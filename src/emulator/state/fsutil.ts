import { rmSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeWhole } from '../../internal/write-whole.js';
import { failedWriteOf } from '../../internal/system-errors.js';

/**
 * Test hook for crash safety: with ROUTER_EMULATOR_CRASH_AFTER_WRITES=N the process kills itself
 * (SIGKILL, as kill -9 would) right after its Nth durable write. Never set outside tests.
 */
const crashAfter = Number(process.env.ROUTER_EMULATOR_CRASH_AFTER_WRITES ?? 0);
let durableWrites = 0;

/** Counts a durable write (a rename or an fsync that makes state survive a crash). */
export function durableWriteDone(): void {
  durableWrites++;
  if (crashAfter > 0 && durableWrites === crashAfter) process.kill(process.pid, 'SIGKILL');
}

/** Writes a file durably and whole (temp file, fsync, rename; mode 0600), counted for the crash hook. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  writeWhole(path, data, true);
  durableWriteDone();
}

/**
 * writeFileAtomicSync with its slow part (the write, the rename and the fsyncs) off the event loop: the
 * data goes to a temp file of its own, and `current()`, asked on the loop once it is on disk, says
 * whether it still replaces `path` (false: a write since made it stale, and it is dropped). The rename
 * too is off the loop (on a busy disk a renameSync held it for tens of ms): a sync write made while it
 * was under way may lie under this older data, so it resolves true when `current()` turned false
 * meanwhile, and the caller writes again.
 */
export async function writeFileAtomicLater(path: string, data: string, current: () => boolean): Promise<boolean> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.later`);
  try {
    const file = await open(temp, 'w', 0o600);
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    if (!current()) {
      await rm(temp, { force: true });
      return false;
    }
    await rename(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw failedWriteOf(err, path);
  }
  durableWriteDone();
  const overtaken = !current();
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return overtaken;
}
