import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { StateStore } from '../../src/emulator/state/store.js';
import { limitRemaining } from '../../src/emulator/state/key-usage.js';

// A key's usage is journaled as the workspace's charge is: a kill -9 before the timed save of
// state.json (100 ms) keeps both. Before, the workspace's charge came back from the journal and the
// key's count was lost: a key with a limit could spend it again after each crash.
// (A second store opened on the folder while the first is still open is what a kill -9 leaves:
// nothing saved since the last save but the journal.)
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("a kill -9 before the timed save keeps a key's usage, on its day", async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-key-journal-'));
  const store = new StateStore(dir);
  const key = store.addKey('default', 'standard', 'capped', { limit: 1, limit_reset: 'daily' });
  store.debit('default', 0.25);
  store.keyUsed(key, 0.25);
  store.keyUsed(key, 0.5);
  store.keyUsed(key, -0.5);
  // Written off the event loop: what an answer's end waits for (server.ts).
  store.flushCharges();
  const killed = new StateStore(dir);
  try {
    expect(killed.workspace('default').total_usage).toBe(0.25);
    const r = killed.findKey(key)!;
    expect(r.usage).toBe(0.25);
    expect(r.usage_days).toEqual(store.findKey(key)!.usage_days);
    expect(limitRemaining(r, killed.now())).toBe(0.75);
    // Applied once: saved by the start, not again at the next.
    killed.close();
    expect(new StateStore(dir).findKey(key)!.usage).toBe(0.25);
  } finally {
    store.close();
  }
});
