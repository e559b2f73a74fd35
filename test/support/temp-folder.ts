import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * A private temp folder for the tests around the call: made when the first of them runs (a run
 * filtered with -t to other tests makes none), removed after the last. Returns its path's getter.
 */
export function tempFolder(prefix: string): () => string {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}
