/** The emulator's Store implementations as its contract tests make them, and the batch records, result lines and readers those tests use. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { StateStore } from '../../src/emulator/state/store.js';
import { MemoryStore } from '../../src/emulator/state/memory-store.js';
import type { Store } from '../../src/emulator/state/store-api.js';
import type { BatchRecord } from '../../src/emulator/state/batch-store.js';

/**
 * Call at a test file's top level: `fileStore` makes a file store in a folder of its own, and `kinds` names each
 * implementation with its maker (the file store, the default, and the memory store; a PostgreSQL store would join
 * it). What they made is closed, and its folder removed, after each test; so is a store a test pushes on `opened`.
 */
export function storesClosedAfterEach(): { fileStore: () => StateStore; kinds: [string, () => Store][]; opened: Store[] } {
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
  return { fileStore, kinds: [['file', fileStore], ['memory', () => new MemoryStore()]], opened };
}

/** A batch record of `workspace` made at `created_at`, two requests, validating. */
export const record = (id: string, workspace: string, created_at: number): BatchRecord => ({
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

/** JSON lines of `items`, as bytes. */
export const lines = (...items: unknown[]) => Buffer.from(items.map((i) => `${JSON.stringify(i)}\n`).join(''));

/** Everything an async iterable gives. */
export const all = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};
