import { describe, expect, it } from 'vitest';
import { listBatches } from '../../src/emulator/batches/batch-list.js';
import type { BatchRecord } from '../../src/emulator/state/batch-store.js';
import type { Ctx } from '../../src/emulator/http/http.js';

// A listing costs what it shows, not the workspace's whole history (#32: `batch run` polls with created_after).
const COUNT = 20_000;
const records: BatchRecord[] = Array.from({ length: COUNT }, (_, i) => {
  const n = COUNT - 1 - i; // newest first
  const id = `batch_${String(n).padStart(6, '0')}`;
  return { id, workspace: 'w', endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', created_at: 1_700_000_000 + n, finalized_at: null, status: n % 2 ? 'completed' : 'failed', request_counts: { total: 1, completed: 1, failed: 0 }, error: null, usage: null, provider: null, payment_due: null, results_deleted: false } as BatchRecord;
});

function list(query: string): { page: { data: { id: string }[]; has_more: boolean }; reads: number } {
  let reads = 0;
  const counted = new Proxy(records, { get: (target, prop, receiver) => (typeof prop === 'string' && /^\d+$/.test(prop) && reads++, Reflect.get(target, prop, receiver)) });
  let page: any;
  const ctx = { url: new URL(`http://x/v1/batches?${query}`), workspace: 'w', send: (_status: number, body: unknown) => (page = body) } as unknown as Ctx;
  listBatches(ctx, counted, (id) => records.find((r) => r.id === id));
  return { page, reads };
}

describe('GET /v1/batches over a long history', () => {
  it('created_after: the walk stops at the first older batch', () => {
    const { page, reads } = list(`created_after=${1_700_000_000 + COUNT - 6}&limit=100`);
    expect(page.data.map((b) => b.id)).toEqual(['batch_019999', 'batch_019998', 'batch_019997', 'batch_019996', 'batch_019995']);
    expect(page.has_more).toBe(false);
    expect(reads).toBeLessThan(20);
  });

  it('created_before and a cursor: the walk starts where they point (a binary search), not at the newest', () => {
    const before = list(`created_before=${1_700_000_000 + 10}&limit=3`);
    expect(before.page.data.map((b) => b.id)).toEqual(['batch_000009', 'batch_000008', 'batch_000007']);
    expect(before.page.has_more).toBe(true);
    expect(before.reads).toBeLessThan(50);
    const after = list('after=batch_000005&limit=100&status=failed');
    expect(after.page.data.map((b) => b.id)).toEqual(['batch_000004', 'batch_000002', 'batch_000000']);
    expect(after.reads).toBeLessThan(50);
  });
});

describe('batch ids', () => {
  it('grow as batches are made, many in one millisecond too', async () => {
    const { newBatchId } = await import('../../src/emulator/batches/batch-rules.js');
    const ids = Array.from({ length: 2000 }, newBatchId);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
