import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { FileLockTimeout } from '../../src/internal/file-lock.js';
import { withFileLockAsync } from '../../src/internal/with-file-lock.js';
import { until } from '../support/until.js';

const LOCK = JSON.stringify(join(import.meta.dirname, '../../src/internal/file-lock.ts'));
const WITH_LOCK = JSON.stringify(join(import.meta.dirname, '../../src/internal/with-file-lock.ts'));
const dir = mkdtempSync(join(tmpdir(), 'router-lock-again-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A child that runs `code` with withFileLock and takeLock in scope; stdout piped (it says when it holds). */
function child(code: string) {
  const p = spawn(process.execPath, ['--import', 'tsx', '-e', `Promise.all([import(${LOCK}), import(${WITH_LOCK})]).then(([{ takeLock }, { withFileLock }]) => { ${code} })`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const said = new Promise((ready) => p.stdout.once('data', ready));
  const exit = new Promise<number | null>((done) => p.on('exit', done));
  return { p, said, exit };
}

it('a writer that keeps taking the lock again (short changes) is waited out: the other is not timed out', async () => {
  const file = join(dir, 'busy');
  const stop = join(dir, 'busy-stop');
  // Changes of 25 ms each, the lock taken again at once after each (what one writer adding entries does), until the
  // test says stop: the lock is never held long, but it is held, by one holding after another, past the waiter's bound.
  const writer = child(`const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let k = 0; !require('node:fs').existsSync(${JSON.stringify(stop)}); k++) withFileLock(${JSON.stringify(file)}, () => { if (k === 0) console.log('holding'); Atomics.wait(pause, 0, 0, 25); });`);
  await writer.said;
  // The bound a waiter gives one holding: 2 s, as one of 25 ms took past 250 ms (the bound here before) at load 30-49
  // on two cores. The writer stops once the waiter has waited twice that: by then the old waiter had timed out.
  // Before: FileLockTimeout "has held its lock for ..." once the bound had passed since the first look.
  const WAIT_MS = 2000;
  const since = Date.now();
  let settled = false;
  const got = withFileLockAsync(file, () => 'mine', WAIT_MS).finally(() => (settled = true));
  await until(() => settled || Date.now() - since > 2 * WAIT_MS);
  writeFileSync(stop, '');
  await expect(got).resolves.toBe('mine');
  expect(await writer.exit).toBe(0);
});

it('one holding kept past the wait is still a FileLockTimeout', async () => {
  const file = join(dir, 'held');
  const holder = child(`takeLock(${JSON.stringify(`${file}.lock`)}); console.log('held'); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`);
  await holder.said;
  try {
    await expect(withFileLockAsync(file, () => 'mine', 250)).rejects.toThrow(FileLockTimeout);
  } finally {
    holder.p.stdin.end();
  }
  expect(await holder.exit).toBe(0);
});
