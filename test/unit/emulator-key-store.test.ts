import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateStore } from '../../src/emulator/state/store.js';
import { MemoryStore } from '../../src/emulator/state/memory-store.js';
import type { Store } from '../../src/emulator/state/store-api.js';
import { limitRemaining, periodStart, usageSince } from '../../src/emulator/state/key-usage.js';

// The Store's key settings and per-key usage (store-api.ts), over both stores; the file store keeps them over a restart.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-keys-'));
    dirs.push(dir);
    return { store: new StateStore(dir) as Store, reopen: (s: Store) => (s.close(), new StateStore(dir) as Store) };
  }],
  ['memory', () => ({ store: new MemoryStore() as Store, reopen: (s: Store) => s })],
] as const)('%s store', (_name, make) => {
  it('keeps settings and usage per key, lists and deletes keys', () => {
    const { store, reopen } = make();
    const key = store.addKey('default', 'standard', 'capped', { limit: 2, limit_reset: 'monthly' });
    store.keyUsed(key, 0.5);
    store.keyUsed(key, -0.25);
    store.updateKey(key, { name: 'renamed', disabled: true });
    const again = reopen(store);
    const r = again.findKey(key)!;
    expect(r).toMatchObject({ name: 'renamed', limit: 2, limit_reset: 'monthly', disabled: true, usage: 0.25 });
    expect(usageSince(r, periodStart('monthly', again.now()))).toBe(0.25);
    expect(limitRemaining(r, again.now())).toBe(1.75);
    expect(again.keysOf('default').map((k) => k.key)).toContain(key);
    again.updateKey(key, null);
    expect(again.findKey(key)).toBeUndefined();
    expect(reopen(again).keysOf('default').map((k) => k.key)).not.toContain(key);
  });
});

describe('key periods', () => {
  it('start at the UTC day, the Monday and the first of the month', () => {
    const thu = Date.parse('2026-11-26T15:00:00Z');
    expect([periodStart('daily', thu), periodStart('weekly', thu), periodStart('monthly', thu)]).toEqual(['2026-11-26', '2026-11-23', '2026-11-01']);
    expect(periodStart('weekly', Date.parse('2026-11-23T00:00:00Z'))).toBe('2026-11-23');
    expect(periodStart('weekly', Date.parse('2026-11-29T23:59:59Z'))).toBe('2026-11-23');
  });
});
