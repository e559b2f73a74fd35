// The contract of the emulator's Store (src/emulator/state/store-api.ts) for batches, run over each implementation:
// a batch uploaded, committed, listed, its results read back, an upload forgotten; and the file store after a restart.
import { describe, expect, it } from 'vitest';
import { StateStore } from '../../src/emulator/state/store.js';
import { all, lines, record, storesClosedAfterEach } from '../support/emulator-stores.js';

const { fileStore, kinds, opened } = storesClosedAfterEach();

describe.each(kinds)('the %s store', (_name, make) => {
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
