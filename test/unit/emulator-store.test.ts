import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateStore } from '../../src/emulator/state/store.js';
import { MemoryStore } from '../../src/emulator/state/memory-store.js';
import type { Store } from '../../src/emulator/state/store-api.js';
import { KEEP } from '../../src/emulator/state/generation-log.js';
import type { BatchRecord } from '../../src/emulator/state/batch-store.js';

// The contract of the emulator's Store (src/emulator/state/store-api.ts), run over each implementation:
// the file store (the default) and the memory store. A PostgreSQL store would join this list.
const dirs: string[] = [];
const opened: Store[] = [];
const fileStore = () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-store-'));
  dirs.push(dir);
  const store = new StateStore(dir);
  opened.push(store);
  return store;
};
afterEach(() => {
  // Closed first: a timed save of charges must not land in a folder being removed.
  for (const store of opened.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const record = (id: string, workspace: string, created_at: number): BatchRecord => ({
  id,
  workspace,
  endpoint: '/v1/chat/completions',
  model: 'local/echo',
  completion_window: '24h',
  created_at,
  finalized_at: null,
  status: 'validating',
  request_counts: { total: 2, completed: 0, failed: 0 },
  error: null,
  usage: null,
  provider: null,
  payment_due: null,
  results_deleted: false,
  metadata: null,
} as BatchRecord);

const lines = (...items: unknown[]) => Buffer.from(items.map((i) => `${JSON.stringify(i)}\n`).join(''));
const all = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe.each([
  ['file', fileStore],
  ['memory', () => new MemoryStore()],
] as [string, () => Store][])('the %s store', (_name, make) => {
  it('starts with a default workspace (a standard and a management key) and an operator key', () => {
    const s = make();
    const { apiKey, managementKey } = s.firstKeys();
    expect(s.findKey(apiKey)).toMatchObject({ kind: 'standard', workspace: 'default' });
    expect(s.findKey(managementKey)).toMatchObject({ kind: 'management', workspace: 'default' });
    expect(s.findKey(s.operatorKey())?.kind).toBe('operator');
    expect(s.findKey('sk-rt-v1-nothing')).toBeUndefined();
    expect(s.balance('default')).toBe(5);
  });

  it('makes workspaces with their credits and keys; a key added belongs to its workspace', () => {
    const s = make();
    const made = s.createWorkspace(undefined, 2);
    expect(s.findKey(made.apiKey)?.workspace).toBe(made.workspace.id);
    expect(s.firstKeys(made.workspace.id)).toEqual({ apiKey: made.apiKey, managementKey: made.managementKey });
    const extra = s.addKey(made.workspace.id, 'standard', 'ci');
    expect(s.findKey(extra)).toMatchObject({ kind: 'standard', name: 'ci', workspace: made.workspace.id });
    expect(s.balance(made.workspace.id)).toBe(2);
    expect(() => s.workspace('ws_none')).toThrow();
  });

  it('hold takes a cost only when the balance covers it; refund gives it back; debit may overdraw', () => {
    const s = make();
    const ws = s.createWorkspace(undefined, 1).workspace.id;
    expect(s.hold(ws, 0.75)).toBe(true);
    expect(s.balance(ws)).toBe(0.25);
    expect(s.hold(ws, 0.5)).toBe(false);
    expect(s.balance(ws)).toBe(0.25);
    s.refund(ws, 0.75);
    expect(s.balance(ws)).toBe(1);
    s.debit(ws, 1.5);
    expect(s.balance(ws)).toBe(-0.5);
    expect(s.hold(ws, 0)).toBe(false);
    expect(s.topUp(ws, 0.7)).toBe(0.2);
    expect(s.workspace(ws)).toMatchObject({ total_credits: 1.7, total_usage: 1.5 });
  });

  it('sums costs without float noise', () => {
    const s = make();
    for (let i = 0; i < 10; i++) s.debit('default', 0.1);
    expect(s.balance('default')).toBe(4);
  });

  it('debitOnce charges a key once; a forgotten key is not charged() any more', () => {
    const s = make();
    expect(s.charged('batch:1')).toBe(false);
    expect(s.debitOnce('default', 0.5, 'batch:1')).toBe(true);
    expect(s.debitOnce('default', 0.5, 'batch:1')).toBe(false);
    expect(s.charged('batch:1')).toBe(true);
    expect(s.balance('default')).toBe(4.5);
    s.forgetCharges(['batch:1']);
    expect(s.charged('batch:1')).toBe(false);
  });

  it('holdOnce holds a key once, only when the balance covers it; settleHold ends it at the real cost, once', () => {
    const s = make();
    expect(s.holdOnce('default', 6, 'batch:b:x')).toBe(false);
    expect(s.charged('batch:b:x')).toBe(false);
    expect(s.holdOnce('default', 2, 'batch:b:x')).toBe(true);
    // Held already (a restart sends its request again under it): true, nothing more taken.
    expect(s.holdOnce('default', 2, 'batch:b:x')).toBe(true);
    expect(s.balance('default')).toBe(3);
    s.settleHold('default', 'batch:b:x', 0.5);
    expect(s.balance('default')).toBe(4.5);
    expect(s.charged('batch:b:x')).toBe(false);
    s.settleHold('default', 'batch:b:x', 0.5);
    expect(s.balance('default')).toBe(4.5);
    // A hold of nothing needs a balance above zero; settled above it, it is charged what is left, never below zero.
    expect(s.holdOnce('default', 0, 'batch:b:y')).toBe(true);
    s.settleHold('default', 'batch:b:y', 5);
    expect(s.balance('default')).toBe(0);
    expect(s.holdOnce('default', 0, 'batch:b:z')).toBe(false);
    // A hold settled above it: what it held, and what was left.
    s.topUp('default', 1);
    expect(s.holdOnce('default', 0.25, 'batch:b:w')).toBe(true);
    s.settleHold('default', 'batch:b:w', 2);
    expect(s.balance('default')).toBe(0);
  });

  it('holdRequest takes a cost only when covered; settleRequest ends it at the real cost, once', () => {
    const s = make();
    expect(s.holdRequest('default', 6)).toBe(0);
    const hold = s.holdRequest('default', 2);
    expect(hold).toBeGreaterThan(0);
    expect(s.balance('default')).toBe(3);
    s.settleRequest('default', hold, 0.5);
    expect(s.balance('default')).toBe(4.5);
    s.settleRequest('default', hold, 0.5);
    expect(s.balance('default')).toBe(4.5);
    const other = s.holdRequest('default', 1);
    expect(other).not.toBe(hold);
    s.settleRequest('default', other, 1.5);
    expect(s.balance('default')).toBe(3);
  });

  it("keeps a batch's generations apart: a batch of more than it keeps never pushes out a call's", async () => {
    const s = make();
    s.keepGeneration('gen-call', { workspace: 'default', data: { id: 'gen-call' } });
    for (let i = 0; i <= KEEP; i++) s.keepGeneration(`gen-batch-${i}`, { workspace: 'default', data: { id: `gen-batch-${i}` }, batch: 'batch_a' });
    await s.idle(); // the file store's write of the turn, done (off the event loop)
    expect(s.generation('gen-call')?.data).toEqual({ id: 'gen-call' });
    expect(s.generation('gen-batch-0')).toBeUndefined();
    expect(s.generation(`gen-batch-${KEEP}`)?.data).toEqual({ id: `gen-batch-${KEEP}` });
    expect([...s.allGenerations()]).toHaveLength(KEEP + 1);
    // The batch each answered, for /v1/activity to count it only once the batch is paid (the file store left it out).
    expect(s.generation(`gen-batch-${KEEP}`)?.batch).toBe('batch_a');
    expect([...s.allGenerations()].at(-1)?.batch).toBe('batch_a');
  });

  it('moves its clock forward', () => {
    const s = make();
    const before = s.now();
    expect(s.advanceClock(60_000)).toBe(60_000);
    expect(s.clockOffsetMs()).toBe(60_000);
    expect(s.now() - before).toBeGreaterThanOrEqual(60_000);
  });

  it('keeps a batch: uploaded, committed, listed newest first, its progress saved, its results read back', async () => {
    const s = make();
    const b = s.batches;
    const up = b.upload('batch_a');
    up.append(lines({ custom_id: 'x', body: { n: 1 } }));
    up.append(lines({ custom_id: 'y', body: { n: 2 } }));
    up.finish();
    expect((await all(up.requests())).map((r) => r.custom_id)).toEqual(['x', 'y']);
    expect(b.get('batch_a')).toBeUndefined();
    b.commit(record('batch_a', 'default', 100), up);
    const older = b.upload('batch_b');
    older.append(lines({ custom_id: 'z', body: {} }));
    older.finish();
    b.commit(record('batch_b', 'default', 50), older);
    expect(b.newestFirst('default').map((r) => r.id)).toEqual(['batch_a', 'batch_b']);
    expect(b.newestFirst('elsewhere')).toEqual([]);
    expect(b.all().map((r) => r.id).sort()).toEqual(['batch_a', 'batch_b']);
    expect(await all(b.requests('batch_a'))).toEqual([{ custom_id: 'x', body: { n: 1 } }, { custom_id: 'y', body: { n: 2 } }]);

    const a = b.get('batch_a')!;
    a.status = 'in_progress';
    b.save(a);
    expect(b.get('batch_a')!.status).toBe('in_progress');
    expect(b.completedResults('batch_a')).toEqual([]);
    const sink = b.openResults('batch_a');
    sink.append({ custom_id: 'x', ok: 1 });
    sink.close();
    // Progress survives a second run over the same batch (a restart): results are appended after.
    const again = b.openResults('batch_a');
    again.append({ custom_id: 'y', ok: 2 });
    again.close();
    expect(b.completedResults('batch_a')).toEqual([{ custom_id: 'x', ok: 1 }, { custom_id: 'y', ok: 2 }]);
    const text = (await all(b.results('batch_a'))).map(String).join('');
    expect(text.split('\n').filter(Boolean).map((l) => JSON.parse(l))).toEqual([{ custom_id: 'x', ok: 1 }, { custom_id: 'y', ok: 2 }]);

    b.deleteResults(a);
    expect(b.get('batch_a')!.results_deleted).toBe(true);
    expect(await all(b.results('batch_a'))).toEqual([]);
    expect(b.completedResults('batch_a')).toEqual([]);
  });

  it('reads results back whole: text of any script across the pieces they are read in', async () => {
    const s = make();
    const up = s.batches.upload('batch_u');
    up.append(lines({ custom_id: 'x', body: {} }));
    up.finish();
    s.batches.commit(record('batch_u', 'default', 1), up);
    const sink = s.batches.openResults('batch_u');
    // About 600 KB: more than one read of a file, with two-byte characters across the reads.
    const items = Array.from({ length: 300 }, (_, i) => ({ custom_id: `r${i}`, text: `x${'é'.repeat(1000)}` }));
    for (const item of items) sink.append(item);
    sink.close();
    const text = (await all(s.batches.results('batch_u'))).join('');
    expect(text.split('\n').filter(Boolean).map((l) => JSON.parse(l))).toEqual(items);
  });

  it('forgets a discarded upload', async () => {
    const s = make();
    const up = s.batches.upload('batch_gone');
    up.append(lines({ custom_id: 'x', body: {} }));
    up.discard();
    expect(s.batches.get('batch_gone')).toBeUndefined();
    expect(s.batches.all()).toEqual([]);
  });

  it('keeps generations by id, with their workspace', () => {
    const s = make();
    expect(s.generation('gen-1')).toBeUndefined();
    s.keepGeneration('gen-1', { workspace: 'default', data: { id: 'gen-1', total_cost: 0.5 } });
    expect(s.generation('gen-1')).toEqual({ workspace: 'default', data: { id: 'gen-1', total_cost: 0.5 } });
  });

  it('gives back every generation it keeps, oldest first, with the hash of its key', async () => {
    const s = make();
    s.keepGeneration('gen-a', { workspace: 'default', key: 'h1', data: { id: 'gen-a' } });
    s.keepGeneration('gen-b', { workspace: 'other', data: { id: 'gen-b' } });
    // Written (the file store writes after the turn, off the event loop), then one more still pending.
    await s.idle();
    s.keepGeneration('gen-c', { workspace: 'default', key: 'h2', data: { id: 'gen-c' } });
    expect([...s.allGenerations()]).toEqual([
      { workspace: 'default', key: 'h1', data: { id: 'gen-a' } },
      { workspace: 'other', data: { id: 'gen-b' } },
      { workspace: 'default', key: 'h2', data: { id: 'gen-c' } },
    ]);
  });
});

describe('the file store', () => {
  it('gives back at start, once, a request hold a kill left open, saved or only journaled; keeps settled ones', () => {
    const s = fileStore();
    const saved = s.holdRequest('default', 1);
    s.settleRequest('default', s.holdRequest('default', 0.5), 0.25);
    s.topUp('default', 0); // a save: the first hold is in state.json
    s.holdRequest('default', 2); // only in the journal
    expect(saved).toBeGreaterThan(0);
    expect(s.balance('default')).toBe(1.75);
    // No close: as after a kill -9.
    const again = new StateStore(s.dir);
    opened.push(again);
    expect(again.balance('default')).toBe(4.75);
    const third = new StateStore(s.dir);
    opened.push(third);
    expect(third.balance('default')).toBe(4.75);
  });

  it('finds its keys, balances, charges and batches again after a restart', async () => {
    const s = fileStore();
    const ws = s.createWorkspace(undefined, 3);
    s.debitOnce(ws.workspace.id, 1, 'batch:k');
    const up = s.batches.upload('batch_k');
    up.append(lines({ custom_id: 'x', body: {} }));
    up.finish();
    s.batches.commit(record('batch_k', ws.workspace.id, 10), up);
    const sink = s.batches.openResults('batch_k');
    sink.append({ custom_id: 'x', ok: true });
    sink.close();
    s.close();
    const again = new StateStore(s.dir);
    opened.push(again);
    expect(again.findKey(ws.apiKey)?.workspace).toBe(ws.workspace.id);
    expect(again.balance(ws.workspace.id)).toBe(2);
    expect(again.debitOnce(ws.workspace.id, 1, 'batch:k')).toBe(false);
    // A hold taken before a kill is still held after it, and settles once.
    expect(again.holdOnce(ws.workspace.id, 0.5, 'batch:k:x')).toBe(true);
    const killed = new StateStore(s.dir);
    opened.push(killed);
    expect(killed.holdOnce(ws.workspace.id, 0.5, 'batch:k:x')).toBe(true);
    expect(killed.balance(ws.workspace.id)).toBe(1.5);
    killed.settleHold(ws.workspace.id, 'batch:k:x', 0.25);
    expect(killed.balance(ws.workspace.id)).toBe(1.75);
    expect(again.batches.newestFirst(ws.workspace.id).map((r) => r.id)).toEqual(['batch_k']);
    expect(again.batches.completedResults('batch_k')).toEqual([{ custom_id: 'x', ok: true }]);
  });
});
