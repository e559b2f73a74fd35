import { openSync, writeSync, fsyncSync, closeSync, renameSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';
import { randomHex } from './ids.js';
import { makeDir } from '../internal/make-dir.js';

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

/** Writes a file durably: temp file in the same folder, fsync, rename. Mode 0600. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  makeDir(dirname(path));
  const tmp = join(dirname(path), `.${basename(path)}.${randomHex(4)}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  durableWriteDone();
}
