import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { sayWhySkipped } from './skip-reason.js';

// A real full file system: a small tmpfs, filled up. Mounting one needs root (CI has it); elsewhere
// the tests that need it skip, and /dev/full (test/e2e/trust.test.ts) still covers stdout.
function canMount(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'router-mount-probe-'));
  const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe]).status === 0;
  if (ok) spawnSync('umount', [probe]);
  rmSync(probe, { recursive: true, force: true });
  return ok;
}

export const mounted = !sayWhySkipped(!canMount(), 'a tmpfs cannot be mounted here (it needs root): the tests on a full disk skip');

/**
 * Registers the hooks of a file whose tests write to a full disk: a 256 KiB tmpfs at `disk`,
 * mounted before them (beforeAll runs only when one of them does: a filtered run leaves nothing),
 * unmounted and removed after. `fill()` fills it but for nothing; files written before stay.
 */
export function fullDiskPerFile(): { disk: string; fill: () => void } {
  const disk = join(tmpdir(), `router-full-disk-${process.pid}`);
  beforeAll(() => {
    if (!mounted) return;
    mkdirSync(disk, { recursive: true });
    spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', disk]);
  });
  afterAll(() => {
    if (mounted) spawnSync('umount', [disk]);
    rmSync(disk, { recursive: true, force: true });
  });
  const fill = () => {
    try {
      writeFileSync(join(disk, 'filler'), Buffer.alloc(512 * 1024));
    } catch {
      /* full: as meant */
    }
  };
  return { disk, fill };
}
