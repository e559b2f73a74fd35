import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BudgetHold, HOLD_MAX_AGE_MS, heldByOthers, holdsDir, isStale, withBudgetLock } from '../../src/cli/spend/budget-hold.js';
import { processStart } from '../../src/internal/process.js';
import { ledgerPath } from '../../src/kit/spend/ledger.js';
import { spentBy } from '../../src/kit/spend/budget.js';
import { linkThere } from '../support/link-there.js';

let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-holds-'));
  env = { ROUTER_STATE_DIR: dir };
  mkdirSync(holdsDir(env), { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The id of a process that has ended. */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;
const record = (name: string, rec: unknown) => writeFileSync(join(holdsDir(env), name), typeof rec === 'string' ? rec : JSON.stringify(rec));
const now = () => new Date().toISOString();

describe('holds on the budgets', () => {
  it("counts the holds of other calls of the same profile, not its own nor another profile's", () => {
    const a = new BudgetHold(env, 'default', 0.25);
    const b = new BudgetHold(env, 'default', 0.5);
    const other = new BudgetHold(env, 'work', 4);
    expect(heldByOthers(env, 'default')).toEqual({ usd: 0.75, calls: 2 });
    expect(heldByOthers(env, 'default', a)).toEqual({ usd: 0.5, calls: 1 });
    b.spent(0.2);
    expect(heldByOthers(env, 'default', a).usd).toBeCloseTo(0.3, 10);
    b.set(0.1);
    expect(heldByOthers(env, 'default', a).usd).toBeCloseTo(0.1, 10);
    b.release();
    other.release();
    expect(heldByOthers(env, 'default', a)).toEqual({ usd: 0, calls: 0 });
    a.release();
    expect(readdirSync(holdsDir(env))).toEqual([]);
  });

  it('removes a stale hold: its process gone (kill -9), its id now another process, a day old, or half-written', () => {
    const dead = deadPid();
    record(`${dead}-aaaaaaaaaaaa.json`, { profile: 'default', usd: 1, pid: dead, time: now() });
    record(`${process.pid}-bbbbbbbbbbbb.json`, { profile: 'default', usd: 1, pid: process.pid, started: 'another start', time: now() });
    record(`${process.pid}-cccccccccccc.json`, { profile: 'default', usd: 1, pid: process.pid, time: new Date(Date.now() - HOLD_MAX_AGE_MS - 1000).toISOString() });
    record(`${dead}-dddddddddddd.json`, '{"profile":"def');
    record(`${dead}-eeeeeeeeeeee.part`, '{}');
    const live = `${process.pid}-ffffffffffff.json`;
    record(live, { profile: 'default', usd: 0.5, pid: process.pid, started: processStart(process.pid), time: now() });
    expect(heldByOthers(env, 'default')).toEqual({ usd: 0.5, calls: 1 });
    expect(readdirSync(holdsDir(env))).toEqual([live]);
  });

  it('the hold of a process killed mid-call goes to the ledger at its bound (the service may have charged it); a settled one does not', async () => {
    const dead = deadPid();
    record(`${dead}-aaaaaaaaaaaa.json`, { profile: 'default', usd: 0.25, pid: dead, time: now(), command: 'chat', model: 'local/lorem', api_root: 'http://127.0.0.1:1/api' });
    // Its cost already in the ledger, killed between two rounds of a tool loop: what it still held was spent by nothing.
    record(`${dead}-bbbbbbbbbbbb.json`, { profile: 'default', usd: 0.5, pid: dead, time: now(), settled: true });
    // Batches not yet made (each one made is held apart, and found again by its job): nothing spent.
    record(`${dead}-cccccccccccc.json`, { profile: 'default', usd: 0.75, pid: dead, time: now(), command: 'batch run', batch: true });
    expect(heldByOthers(env, 'default')).toEqual({ usd: 0, calls: 0 });
    expect(readdirSync(holdsDir(env))).toEqual([]);
    const lines = readFileSync(ledgerPath(env), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ profile: 'default', command: 'chat', model: 'local/lorem', cost: 0.25, api_root: 'http://127.0.0.1:1/api', unsettled: expect.stringMatching(/counted at its bound/) })]);
    expect(await spentBy(env, 'default')).toEqual({ today: 0.25, month: 0.25 });
  });

  it('the hold of a killed process whose bound the ledger cannot take is held for a day instead', () => {
    mkdirSync(ledgerPath(env));
    const dead = deadPid();
    record(`${dead}-aaaaaaaaaaaa.json`, { profile: 'default', usd: 0.25, pid: dead, time: now() });
    expect(heldByOthers(env, 'default')).toEqual({ usd: 0, calls: 0, kept: 0.25 });
    expect(heldByOthers(env, 'default')).toEqual({ usd: 0, calls: 0, kept: 0.25 });
    expect(readdirSync(holdsDir(env))).toEqual([`unrecorded-${dead}-aaaaaaaaaaaa.json`]);
  });

  it('read without tidying (router usage, a dry run): nothing removed or written, a killed call counted at its bound as the next check would', () => {
    const dead = deadPid();
    record(`${dead}-aaaaaaaaaaaa.json`, { profile: 'default', usd: 0.25, pid: dead, time: now() });
    record(`unrecorded-${dead}-bbbbbbbbbbbb.json`, { profile: 'default', usd: 0.5, pid: dead, time: now() });
    record('batch-b1.json', { profile: 'default', usd: 0.125, batch_id: 'b1', time: now() });
    const before = readdirSync(holdsDir(env)).sort();
    expect(heldByOthers(env, 'default', undefined, Date.now(), false)).toEqual({ usd: 0, calls: 0, kept: 0.875 });
    expect(readdirSync(holdsDir(env)).sort()).toEqual(before);
    expect(() => readFileSync(ledgerPath(env))).toThrow(/ENOENT/);
    // Tidied, the same is counted: the killed call's bound in the ledger, the others kept.
    expect(heldByOthers(env, 'default')).toEqual({ usd: 0, calls: 0, kept: 0.625 });
  });

  it('isStale: a live process of the same start holds; anything else does not', () => {
    const rec = { profile: 'p', usd: 1, pid: process.pid, started: processStart(process.pid), time: now() };
    expect(isStale(rec)).toBe(false);
    expect(isStale({ ...rec, started: undefined })).toBe(false);
    expect(isStale({ ...rec, pid: deadPid() })).toBe(true);
    expect(isStale({ ...rec, time: 'yesterday' })).toBe(true);
    expect(isStale({ ...rec, usd: undefined })).toBe(true);
  });

  it('a hold is released when its process exits, whatever the command did', () => {
    const script = `import('${join(import.meta.dirname, '../../src/cli/spend/budget-hold.ts').replace(/'/g, "\\'")}').then((m) => { new m.BudgetHold({ ROUTER_STATE_DIR: ${JSON.stringify(dir)} }, 'default', 1); process.exit(3); })`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(3);
    expect(readdirSync(holdsDir(env))).toEqual([]);
  });
});

describe('the lock on the budgets', () => {
  it('checks take turns: no two at once (several processes: test/e2e/budget-holds.test.ts)', async () => {
    let inside = 0;
    let most = 0;
    const check = async () => {
      most = Math.max(most, ++inside);
      await new Promise((r) => setTimeout(r, 20));
      inside--;
    };
    const signal = new AbortController().signal;
    await Promise.all([1, 2, 3, 4].map(() => withBudgetLock(env, signal, check)));
    expect(most).toBe(1);
  });

  it('a lock left by a process that is gone is taken over; Ctrl-C ends a wait for a live one', async () => {
    const lock = join(holdsDir(env), '.lock');
    symlinkSync(String(deadPid()), lock);
    const signal = new AbortController().signal;
    expect(await withBudgetLock(env, signal, async () => 'checked')).toBe('checked');
    expect(linkThere(lock)).toBe(false);
    symlinkSync(String(process.ppid), lock);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('interrupted')), 50);
    await expect(withBudgetLock(env, stop.signal, async () => 'checked')).rejects.toThrow('interrupted');
    // The live holder's lock stays.
    expect(readlinkSync(lock)).toBe(String(process.ppid));
  });

  it('a lock of another pid namespace, left unrefreshed by a process killed holding it, is taken over', async () => {
    const lock = join(holdsDir(env), '.lock');
    rmSync(lock, { force: true });
    symlinkSync(`1:5@${hostname()}#4026531999`, lock);
    // Before: held until removed by hand (BudgetBusy at the end of every wait).
    expect(await withBudgetLock(env, new AbortController().signal, async () => 'checked', 20_000)).toBe('checked');
    expect(linkThere(lock)).toBe(false);
  });
});
