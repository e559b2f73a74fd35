import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { StateStore } from '../../src/emulator/state/store.js';
import { waitBound } from '../support/until.js';

// The emulator's per-request work does not grow with its history (#32: capacity must not drift).
let dir: string;
let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  rmSync(dir, { recursive: true, force: true });
});
const stateFile = () => JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { charges?: Record<string, number>; keys: unknown[] };

async function api(e: Emulator, path: string, key: string, body?: unknown) {
  const res = await fetch(`${e.apiRoot}${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

async function runBatches(e: Emulator, count: number): Promise<string[]> {
  const { apiKey } = e.store.firstKeys();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const requests = [{ custom_id: 'a', body: { messages: [{ role: 'user', content: `batch ${i}` }] } }];
    const created = await api(e, '/v1/batches', apiKey, { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests });
    expect(created.status).toBe(202);
    ids.push(created.json.id);
  }
  // Until they are done (200 looks, 4 s, can be too few on a loaded machine).
  for (const end = Date.now() + waitBound(); Date.now() < end; ) {
    const list = await api(e, '/v1/batches?limit=100', apiKey);
    if (list.json.data.every((b: { status: string }) => b.status === 'completed')) return ids;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the batches did not complete');
}

describe('emulator state that every save rewrites stays the size of what is in flight', () => {
  it('a batch that ended and was charged leaves no charge key behind in state.json', async () => {
    dir = mkdtempSync(join(tmpdir(), 'router-drift-'));
    emu = await startEmulator({ stateDir: dir, batchDelayMs: 0 });
    const ids = await runBatches(emu, 12);
    const { managementKey } = emu.store.firstKeys();
    // Charged once each: the workspace paid for all twelve.
    expect((await api(emu, '/v1/credits', managementKey)).json.data.total_usage).toBeGreaterThan(0);
    // A top-up saves state.json at once: what it holds now is what every later save rewrites.
    expect((await api(emu, '/_emulator/credits', managementKey, { amount: 1 })).status).toBe(200);
    expect(Object.keys(stateFile().charges ?? {})).toEqual([]);
    expect(ids).toHaveLength(12);
  });

  it('charge keys of ended batches, left by an older emulator, are dropped at start; in-flight ones are kept', async () => {
    dir = mkdtempSync(join(tmpdir(), 'router-drift-'));
    emu = await startEmulator({ stateDir: dir, batchDelayMs: 0 });
    const ids = await runBatches(emu, 3);
    const usage = emu.store.workspace('default').total_usage;
    await emu.close();
    emu = undefined;
    const state = stateFile();
    state.charges = { ...Object.fromEntries(ids.map((id) => [`batch:${id}`, 0.001])), 'batch:batch_not_here': 0.5 };
    writeFileSync(join(dir, 'state.json'), JSON.stringify(state));
    emu = await startEmulator({ stateDir: dir, batchDelayMs: 0 });
    const { managementKey } = emu.store.firstKeys();
    await api(emu, '/_emulator/credits', managementKey, { amount: 1 });
    // Nothing charged again, and only the key whose batch the emulator does not know as ended is kept.
    expect(emu.store.workspace('default').total_usage).toBe(usage);
    expect(stateFile().charges).toEqual({ 'batch:batch_not_here': 0.5 });
  });
});

describe('emulator key lookups', () => {
  it('find a key among thousands without scanning the list of keys', () => {
    dir = mkdtempSync(join(tmpdir(), 'router-drift-'));
    const store = new StateStore(dir);
    for (let i = 0; i < 5000; i++) store.addKey('default', 'standard', `key ${i}`, {}, false);
    const wanted = store.firstKeys('default').apiKey;
    const last = store.addKey('default', 'standard', 'last');
    // Every read of the saved list of keys is counted: a lookup must not walk it.
    const state = (store as unknown as { state: { keys: unknown[] } }).state;
    let reads = 0;
    state.keys = new Proxy(state.keys, { get: (target, prop, receiver) => (typeof prop === 'string' && /^\d+$/.test(prop) && reads++, Reflect.get(target, prop, receiver)) });
    expect(store.findKey(last)?.name).toBe('last');
    expect(store.findKey(wanted)?.workspace).toBe('default');
    expect(store.findKey('sk-rt-v1-nothing')).toBeUndefined();
    expect(reads).toBe(0);
  });
});

describe('emulator charge saves', () => {
  it('the timed save of per-request charges writes off the event loop, and never over a newer save', async () => {
    dir = mkdtempSync(join(tmpdir(), 'router-drift-'));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const store = new StateStore(dir);
      const usage = () => (stateFile() as unknown as { workspaces: Record<string, { total_usage: number; total_credits: number }> }).workspaces.default!;
      store.debit('default', 0.25);
      vi.advanceTimersByTime(100);
      // The timer has fired and returned: its write is still under way, not done on the loop.
      expect(usage().total_usage).toBe(0);
      await store.idle();
      expect(usage().total_usage).toBe(0.25);
      // A save at once (a top-up) while a timed one is under way: the timed one, now stale, is dropped.
      store.debit('default', 0.5);
      vi.advanceTimersByTime(100);
      store.topUp('default', 10);
      store.debit('default', 0.125);
      await store.idle();
      expect(usage()).toMatchObject({ total_usage: 0.25 + 0.5, total_credits: 15 });
      store.close();
      expect(usage().total_usage).toBe(0.875);
      // No temp file of a dropped save is left beside it; the journal's segments go once a save holds them.
      expect(readdirSync(dir).sort()).toEqual(['state.json']);
    } finally {
      vi.useRealTimers();
    }
  });
});
