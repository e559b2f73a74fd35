import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p`, with `mode` for every folder it makes. Node's own `{ recursive: true }` spins
 * forever where a folder cannot be made under a parent that exists (e.g. anywhere in /proc:
 * ENOENT, then EEXIST for the parent, again and again); here each folder is tried at most twice.
 */
export function makeDir(dir: string, mode = 0o700): void {
  try {
    mkdirSync(dir, { mode });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && isFolder(dir)) return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw err;
    makeDir(parent, mode);
  }
  try {
    mkdirSync(dir, { mode });
  } catch (err) {
    // Made meanwhile by another process: as good.
    if (!((err as NodeJS.ErrnoException).code === 'EEXIST' && isFolder(dir))) throw err;
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
