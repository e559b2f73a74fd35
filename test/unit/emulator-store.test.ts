// The contract of the emulator's Store (src/emulator/state/store-api.ts), run over each implementation: its keys,
// workspaces, balances, holds and charges, its clock and the generations it keeps. Its batches: emulator-store-batches.test.ts.
import { describe, expect, it } from 'vitest';
import { KEEP } from '../../src/emulator/state/generation-log.js';
import { storesClosedAfterEach } from '../support/emulator-stores.js';

const { kinds } = storesClosedAfterEach();

describe.each(kinds)('the %s store', (_name, make) => {
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
