// A batch's hold is written by a process not holding the budgets' lock (the create's answer came): another's check
// under the lock must never read it half-written (and remove it as stale: the batch's bound then counted by no one),
// nor remove the `.part` it is written through while the write is under way.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';

const between: { check?: (() => void) | undefined } = {};
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const writeFileSync = ((file: string, data: string, opts?: { mode?: number }) => {
    if (!between.check || !String(file).includes('batch-')) return real.writeFileSync(file, data, opts);
    const fd = real.openSync(file, 'w', opts?.mode);
    between.check();
    real.writeSync(fd, data);
    real.closeSync(fd);
  }) as typeof real.writeFileSync;
  return { ...real, default: { ...real, writeFileSync }, writeFileSync };
});
import { BudgetHold, heldByOthers, holdsDir } from '../../src/cli/spend/budget-hold.js';
import { batchHoldPath } from '../../src/kit/spend/ledger.js';

let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-batch-hold-'));
  env = { ROUTER_STATE_DIR: dir };
  mkdirSync(holdsDir(env), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('a batch hold under way through its .part is left by a check; one left a minute is removed', () => {
  const part = `${batchHoldPath(env, 'batch_young')}.part`;
  writeFileSync(part, '{"profile":"default","us');
  heldByOthers(env, 'default');
  // Was: removed at once (its name names no process), so the rename that puts it in place failed.
  expect(existsSync(part)).toBe(true);
  const old = new Date(Date.now() - 120_000);
  utimesSync(part, old, old);
  heldByOthers(env, 'default');
  expect(existsSync(part)).toBe(false);
});

it("a check that comes while a batch's hold is written leaves it, and counts it once written", () => {
  const hold = new BudgetHold(env, 'default', 0.5);
  // writeFileSync opens (emptying) and then writes: another process's check between the two is what the CI once met.
  between.check = () => heldByOthers(env, 'other');
  try {
    expect(hold.toBatch(env, 'batch_b1')).toBeUndefined();
  } finally {
    between.check = undefined;
  }
  // Was: the empty batch file read as a stale hold and removed; the write then went to a file no longer there.
  expect(heldByOthers(env, 'default')).toEqual({ usd: 0, calls: 0, kept: 0.5 });
  expect(readdirSync(holdsDir(env)).filter((n) => n.endsWith('.part'))).toEqual([]);
});
