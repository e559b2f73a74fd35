import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { StateStore } from '../../src/emulator/state/store.js';
import { storageHooks } from '../../src/emulator/state/fsutil.js';
import { SETTLE } from '../support/until.js';

// A charge the disk cannot take (full) is in memory only until a save of state.json lands: a kill -9
// meanwhile loses it, and the answer it paid for was given for nothing. Before: answers went on
// (charged in memory); a kill -9 then kept none of those charges. Now the charge that could not be
// written is given back and its request refused (503, nothing answered), and so is every paid
// request until a save lands. The disk is made full through the store's seam (fsutil.ts
// storageHooks: every write to the state folder fails as ENOSPC); the requests go over HTTP.
let dir: string;
let state: string;
let emu: Emulator;
let key: string;
const opened: StateStore[] = [];

/** What a start finds after a kill -9 now: a copy of the state folder as it is, opened. */
function afterKill(): StateStore {
  const copy = join(dir, `copy-${opened.length}`);
  cpSync(state, copy, { recursive: true });
  const store = new StateStore(copy);
  opened.push(store);
  return store;
}

const chat = (stream: boolean) =>
  fetch(`${emu.apiRoot}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local/lorem', stream, messages: [{ role: 'user', content: 'write 40 words' }] }),
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-full-refuses-'));
  state = join(dir, 'state');
  emu = await startEmulator({ stateDir: state, port: 0 });
  key = emu.store.firstKeys().apiKey;
});

afterAll(async () => {
  delete storageHooks.full;
  for (const store of opened) store.close();
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('charges the disk cannot take', () => {
  it('refuse paid requests (503) until a save lands: a kill -9 meanwhile loses no charge of an answer given', async () => {
    const stderr = process.stderr.write;
    let said = '';
    process.stderr.write = (chunk: string | Uint8Array) => ((said += String(chunk)), true);
    try {
      const first = await chat(false);
      expect(first.status).toBe(200);
      await first.text();
      const paid = emu.store.workspace('default').total_usage;
      expect(paid).toBeGreaterThan(0);
      storageHooks.full = (file) => file.startsWith(state);
      for (const stream of [false, true, false]) {
        const res = await chat(stream);
        // Before: 200, the answer given, its charge in memory only (usage 0.00028 in memory, 0.00007 after a kill -9).
        expect(res.status, `stream: ${stream}`).toBe(503);
        expect(res.headers.get('retry-after')).toBe('1');
        const { error } = (await res.json()) as { error: { message: string } };
        expect(error.message).toBe('The emulator cannot save charges to its disk now; paid requests are refused until it can, so that none is answered unpaid');
        expect(error.message).not.toContain(state);
      }
      expect(emu.store.workspace('default').total_usage).toBe(paid);
      // What a kill -9 now leaves: every answer given is paid for on disk.
      expect(afterKill().workspace('default').total_usage).toBeCloseTo(paid, 10);
      expect(said).toContain('paid requests are refused meanwhile');
      // Room again: the save retried each second lands, and paid requests are answered.
      delete storageHooks.full;
      // Until it lands, within the test's bound: 10 s of retries a second is a time a loaded machine can pass.
      await vi.waitFor(() => expect(emu.store.chargesUnsaved?.()).toBeUndefined(), SETTLE);
      const again = await chat(true);
      expect(again.status).toBe(200);
      await again.text();
      expect(emu.store.workspace('default').total_usage).toBeGreaterThan(paid);
    } finally {
      process.stderr.write = stderr;
    }
  });
});
