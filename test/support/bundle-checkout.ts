/** A checkout's built CLI bundle as the bundle tests see it: the checkout's root, loadBundle() from a fresh node, a copy to damage. */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';

/** The checkout's root (the folder of bin/ and dist/). */
export const ROOT = resolve(BIN, '..', '..');

/** What loadBundle() of a checkout's bin/router.cjs gives, seen from a fresh node. */
export function loadBundle(root: string): { main: string; rejected: boolean | null } {
  const code = `const b = require(${JSON.stringify(join(root, 'bin', 'router.cjs'))}).loadBundle();
    process.stdout.write(JSON.stringify({ main: typeof b?.main, rejected: b ? b.script.cachedDataRejected : null }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8', env: { PATH: process.env.PATH } }));
}

/** A copy of the checkout's built package (its dependencies linked), to damage or change. */
export function copyCheckout(copy: string): string {
  cpSync(join(ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true, preserveTimestamps: true });
  cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

/** Call in a describe block: an emulator's env and a temp folder, handed to `started` before its tests, closed and removed after them. */
export function envAndFolderForAll(started: (t: TestEnv, dir: string) => void): void {
  let t: TestEnv | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    t = await startTestEnv();
    dir = mkdtempSync(join(tmpdir(), 'router-bundle-test-'));
    started(t, dir);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
}
