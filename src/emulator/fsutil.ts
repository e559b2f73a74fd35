import { writeWhole } from '../internal/write-whole.js';

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
