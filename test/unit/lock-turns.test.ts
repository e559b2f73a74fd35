import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { FileLockTimeout } from '../../src/internal/file-lock.js';
import { withFileLock, withFileLockAsync } from '../../src/internal/with-file-lock.js';
import { until } from '../support/until.js';

// A writer that takes a file's lock again at once after each change kept a waiter of another process waiting for
// as long as it went on (the waiter polls every 5 ms; the writer's next take came microseconds after its release).
// A waiter now takes the next turn (`<lock>.next`): the writer lets it in after the change under way.
const WITH_LOCK = JSON.stringify(join(import.meta.dirname, '../../src/internal/with-file-lock.ts'));
const dir = mkdtempSync(join(tmpdir(), 'router-lock-turns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Rounds of the turn test: in each, the old code let the writer in first unless it was preempted in the microseconds between its release and its next take. */
const ROUNDS = 3;

it('a writer that takes the lock again at once after its change lets a waiter of another process in first', async () => {
  const file = join(dir, 'turns');
  const log = join(dir, 'turns-log');
  writeFileSync(log, '');
  const q = (path: string) => JSON.stringify(path);
  // Round r: once told (go.r), the writer takes the lock, says so (held.r) and keeps it until the waiter has taken
  // its turn (at most 3 s: the old code made none), logs "w"; then takes it again at once and logs "W".
  const writer = spawn(process.execPath, ['--import', 'tsx', '-e', `import(${WITH_LOCK}).then(({ withFileLock }) => {
    const fs = require('node:fs');
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let r = 0; r < ${ROUNDS}; r++) {
      while (!fs.existsSync(${q(file)} + '.go.' + r)) Atomics.wait(pause, 0, 0, 5);
      withFileLock(${q(file)}, () => {
        fs.writeFileSync(${q(file)} + '.held.' + r, '');
        for (const end = Date.now() + 3000; Date.now() < end && !fs.existsSync(${q(`${file}.lock.next`)}); ) Atomics.wait(pause, 0, 0, 5);
        fs.appendFileSync(${q(log)}, 'w');
      });
      withFileLock(${q(file)}, () => fs.appendFileSync(${q(log)}, 'W'));
    }
  })`], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exit = new Promise<number | null>((done) => writer.on('exit', done));
  for (let r = 0; r < ROUNDS; r++) {
    writeFileSync(`${file}.go.${r}`, '');
    expect(await until(() => existsSync(`${file}.held.${r}`))).toBe(true);
    await withFileLockAsync(file, () => appendFileSync(log, 'T'), 60_000);
    // The writer's second take done before the next round (the waiter's came first or not).
    expect(await until(() => readFileSync(log, 'utf8').length === 3 * (r + 1))).toBe(true);
  }
  expect(await exit).toBe(0);
  // Before: "wWT" a round (the waiter in only after the writer's next change).
  expect(readFileSync(log, 'utf8')).toBe('wTW'.repeat(ROUNDS));
  expect(existsSync(`${file}.lock.next`)).toBe(false);
});

it('a turn left by a process that is gone (kill -9 while it waited) is removed, and the lock taken', () => {
  const file = join(dir, 'left');
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  symlinkSync(String(dead), `${file}.lock.next`);
  expect(withFileLock(file, () => 'mine', 1000)).toBe('mine');
  expect(existsSync(`${file}.lock.next`)).toBe(false);
});

it('a live process whose turn it is but that never takes the lock is waited for a bound, then named', async () => {
  const file = join(dir, 'stuck');
  const other = spawn('sleep', ['30']);
  try {
    symlinkSync(String(other.pid), `${file}.lock.next`);
    await expect(withFileLockAsync(file, () => 'mine', 250)).rejects.toThrow(FileLockTimeout);
    await expect(withFileLockAsync(file, () => 'mine', 250)).rejects.toThrow(`process ${other.pid} has waited its turn at its lock for 0.25 s without taking it`);
  } finally {
    other.kill();
  }
  // Gone, its turn is no one's: the lock is taken.
  await new Promise((done) => other.on('exit', done));
  await expect(withFileLockAsync(file, () => 'mine', 1000)).resolves.toBe('mine');
});

it("a turn of this process is not waited for: a synchronous caller beside this process's own waiter takes the free lock", () => {
  const file = join(dir, 'own');
  symlinkSync(readlinkOwnText(), `${file}.lock.next`);
  expect(withFileLock(file, () => 'mine', 250)).toBe('mine');
});

/** This process's lock text, as a lock it takes says it. */
function readlinkOwnText(): string {
  const probe = join(dir, 'probe');
  return withFileLock(probe, () => spawnSync('readlink', [`${probe}.lock`], { encoding: 'utf8' }).stdout.trim());
}
