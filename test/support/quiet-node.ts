import { accessSync, constants, statfsSync } from 'node:fs';

// Every node the tests start (bin/router.cjs, the emulator, scripts) talks plain HTTP to 127.0.0.1: none needs
// the extra CA certificates a machine may name in NODE_EXTRA_CA_CERTS, and reading them costs each start
// ~25 ms of CPU (measured here: node -e 0 takes 40 ms with them, 15 ms without), over a thousand starts a run.
delete process.env.NODE_EXTRA_CA_CERTS;

// Test folders in memory: the emulator and the CLI fsync what they save (state, ledgers, jobs, profiles), and on a disk
// each fsync holds the test's worker (where the in-process emulator answers too) for milliseconds: ~16 s of a run's
// worker time was spent in fsync with /tmp on ext4, against nothing on tmpfs. A TMPDIR set by the caller is kept.
const TMPFS_MAGIC = 0x01021994;
const MEMORY = '/dev/shm';
if (!process.env.TMPDIR) {
  try {
    accessSync(MEMORY, constants.W_OK);
    if (statfsSync(MEMORY).type === TMPFS_MAGIC) process.env.TMPDIR = MEMORY;
  } catch {
    // No /dev/shm (not Linux) or not writable: os.tmpdir() as it is.
  }
}
