import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StateStore } from '../../src/emulator/state/store.js';
import { storageHooks } from '../../src/emulator/state/fsutil.js';
import { SETTLE } from '../support/until.js';
import { JournalSaves } from '../support/journal-saves.js';

// The charges journal in segments (charge-journal.ts): a save never empties a file in place, so a
// steady stream of charges needs no save on the event loop; and what a kill -9 leaves at the
// instants that matter (read here from a copy of the state folder taken then) adds up exactly.
const dirs: string[] = [];
const opened: StateStore[] = [];
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-segments-'));
  dirs.push(dir);
  return dir;
};
const open = (dir: string) => {
  const store = new StateStore(dir);
  opened.push(store);
  return store;
};
/** What a start finds after a kill -9 now: a copy of the folder as it is, opened. */
const afterKill = (dir: string) => {
  const copy = folder();
  cpSync(dir, copy, { recursive: true });
  return open(copy);
};
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => {
  for (const key of Object.keys(storageHooks)) delete storageHooks[key as keyof typeof storageHooks];
  for (const store of opened.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the charges journal in segments', () => {
  it('a steady stream of charges: no save on the event loop, and the journal on disk holds only what came since the last saves', async () => {
    const dir = folder();
    const store = open(dir);
    const atOnce = store.saves.atOnce;
    let charges = 0;
    const journal = new JournalSaves(dir);
    // A charge every turn of the timers, so some come during every save (before, the journal was then never emptied).
    while (store.saves.later < 10) {
      store.debit('default', 0.0001);
      charges++;
      await tick(1);
      // Not a share of the charges (less than half was, till a save slowed by load held more than half of them):
      // each look, the charges that saves have taken are gone.
      expect(journal.look(store.saves.later)).toBeUndefined();
    }
    expect(store.saves.atOnce).toBe(atOnce);
    store.flushCharges(); // what the last answer's end does first (server.ts)
    // The copy is file by file, not a kill's one instant: taken while a timer's save removed the segments its
    // state.json holds, it met a segment gone (ENOENT), or could pair that save's older state.json with them gone.
    await store.idle();
    expect(afterKill(dir).workspace('default').total_usage).toBeCloseTo(charges * 0.0001, 10);
  });

  it('a save at once while a timed save is renaming, then a kill -9 right after that rename: the debitOnce, settleHold and key are kept', async () => {
    const dir = folder();
    const store = open(dir);
    const { workspace } = store.createWorkspace('ws', 10);
    store.debitOnce(workspace.id, 0.5, 'batch:a');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let renaming!: () => void;
    const atRename = new Promise<void>((r) => (renaming = r));
    let killed: StateStore | undefined;
    storageHooks.beforeLaterRename = async () => {
      renaming();
      await gate;
    };
    storageHooks.afterLaterRename = async () => {
      killed = afterKill(dir);
    };
    store.debit(workspace.id, 1); // the timer's save of this charge is the one held at its rename
    await atRename;
    // Each made (and saved at once) while that save's rename, off the loop, is still to run.
    expect(store.debitOnce(workspace.id, 2, 'batch:b')).toBe(true);
    store.settleHold(workspace.id, 'batch:a', 0.25);
    const key = store.addKey(workspace.id, 'standard', 'late');
    release();
    await store.idle();
    // Before: the rename laid the older snapshot over these, and the journal had none of them.
    expect(killed!.balance(workspace.id)).toBe(10 - 1 - 2 - 0.25);
    expect(killed!.charged('batch:b')).toBe(true);
    expect(killed!.charged('batch:a')).toBe(false);
    expect(killed!.findKey(key)?.workspace).toBe(workspace.id);
    expect(open(dir).balance(workspace.id)).toBe(10 - 1 - 2 - 0.25);
  });

  it('a save at once that fails while a timed save is under way: the timed save, dropped for it, deletes no segment', async () => {
    const dir = folder();
    const store = open(dir);
    store.debit('default', 0.25); // journaled only: state.json on disk has none of it
    let asked = 0;
    let failed: unknown;
    // The timed save of that charge starts its write; right after (a microtask, before the write is done) a
    // key is made, and its save at once meets a full disk. The timed save, stale, is dropped.
    storageHooks.full = (file) => {
      if (file !== join(dir, 'state.json')) return false;
      if (++asked === 1)
        queueMicrotask(() => {
          try {
            store.addKey('default', 'standard', 'late');
          } catch (err) {
            failed = err;
          }
        });
      return asked > 1;
    };
    while (asked === 0) await tick(10);
    await store.idle();
    delete storageHooks.full;
    expect((failed as { code?: string } | undefined)?.code).toBe('ENOSPC');
    // A kill -9 now: state.json is the one before the charge, so its segment must still be there.
    expect(afterKill(dir).workspace('default').total_usage).toBe(0.25);
  });

  it('a full disk: what was written before it stays; charges made meanwhile are saved once there is room; a kill at either time loses none written', async () => {
    const dir = folder();
    const store = open(dir);
    const said: string[] = [];
    const stderr = process.stderr.write;
    process.stderr.write = ((text: string) => said.push(String(text)) > 0) as typeof process.stderr.write;
    try {
      for (let i = 0; i < 3; i++) store.debit('default', 0.125);
      storageHooks.full = (file) => file.startsWith(`${dir}/`); // not the copies a kill is read from
      for (let i = 0; i < 3; i++) store.debit('default', 0.25);
      // Until the timed save has failed too (said once on stderr).
      while (!said.some((s) => s.includes('state.json'))) await tick(10);
      await store.idle();
      expect(said.join('')).toMatch(/disk full/);
      // A kill -9 now: the three charges journaled before the disk filled are all there; the failed save deleted nothing.
      expect(afterKill(dir).workspace('default').total_usage).toBe(0.375);
      const saved = store.saves.later;
      delete storageHooks.full;
      while (store.saves.later === saved) await tick(20);
      expect(said.join('')).toMatch(/saved again/);
      expect(afterKill(dir).workspace('default').total_usage).toBe(0.375 + 0.75);
      store.debit('default', 1);
      // Written off the event loop: what an answer's end waits for (server.ts).
      store.flushCharges();
      expect(afterKill(dir).workspace('default').total_usage).toBe(1.375 + 0.75);
    } finally {
      process.stderr.write = stderr;
    }
  });

  it('a save at once that fails is tried again until it lands; a timed save dropped for it never says "saved again"', async () => {
    const dir = folder();
    const store = open(dir);
    const said: string[] = [];
    const stderr = process.stderr.write;
    process.stderr.write = ((text: string) => said.push(String(text)) > 0) as typeof process.stderr.write;
    try {
      let asked = 0;
      let failed: unknown;
      // 1: the timed save of a charge fails (said on stderr). 2: its retry starts its write; right after, a
      // top-up is made, and its save at once (3) fails too. The retry, stale, is dropped: nothing was saved.
      storageHooks.full = (file) => {
        if (file !== join(dir, 'state.json')) return false;
        if (++asked === 2)
          queueMicrotask(() => {
            try {
              store.topUp('default', 5);
            } catch (err) {
              failed = err;
            }
          });
        return asked !== 2;
      };
      store.debit('default', 0.25);
      while (asked < 3) await tick(20);
      await store.idle();
      expect((failed as { code?: string } | undefined)?.code).toBe('ENOSPC');
      expect(said.join('')).toMatch(/state\.json: disk full/);
      // Before: the dropped save said the state was saved again.
      expect(said.join('')).not.toMatch(/saved again/);
      // Room again: the top-up reaches disk by itself (before, only with whatever save came next).
      delete storageHooks.full;
      await vi.waitFor(() => expect(said.join('')).toMatch(/saved again/), SETTLE);
      await store.idle();
      expect(afterKill(dir).workspace('default')).toEqual(store.workspace('default'));
      expect(store.workspace('default').total_usage).toBe(0.25);
    } finally {
      process.stderr.write = stderr;
    }
  });

  it('temp files a kill -9 left mid-save are removed at the next start; those of a process still running are not', () => {
    const dir = folder();
    open(dir).close();
    const dead = 99_999_999; // above any pid Linux gives
    const stale = [`.state.json.${dead}.later`, `.state.json.${dead}.later.over`, `.state.json.${dead}`, `..state.json.${dead}.later.over.${dead}`];
    const kept = [`.state.json.${process.ppid}.later`, '.other.json.99999999.later', 'state.json.99999999.later'];
    for (const name of [...stale, ...kept]) writeFileSync(join(dir, name), '{}');
    const store = open(dir);
    expect(readdirSync(dir).filter((n) => n.includes('.json.')).sort()).toEqual([...kept].sort());
    expect(store.workspace('default').total_usage).toBe(0);
  });
});
