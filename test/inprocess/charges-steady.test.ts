import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import type { StateStore } from '../../src/emulator/state/store.js';
import { JournalSaves } from '../support/journal-saves.js';

// Chats one after another over HTTP, across many timed saves: none of the saves is made on the event
// loop (before, the journal grew while charges came during every save, and at 4 MB a save on the
// loop emptied it), and the journal on disk stays the size of what came since the last saves.
const dir = mkdtempSync(join(tmpdir(), 'router-charges-steady-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('steady chats: no save on the event loop, the journal bounded, every charge in state.json at the end', async () => {
  const emu = await startEmulator({ stateDir: dir, port: 0 });
  const store = emu.store as StateStore;
  const key = store.firstKeys().apiKey;
  const atOnce = store.saves.atOnce;
  let chats = 0;
  let cost = 0;
  const journal = new JournalSaves(dir);
  try {
    while (store.saves.later < 12) {
      const res = await fetch(`${emu.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/lorem', messages: [{ role: 'user', content: `write ${(chats % 5) + 2} words` }] }) });
      expect(res.status).toBe(200);
      cost += ((await res.json()) as { usage: { cost: number } }).usage.cost;
      chats++;
      // Each look, the charges that saves have taken are gone (not a share of the lines: how many come during a save
      // depends on the machine's load).
      expect(journal.look(store.saves.later)).toBeUndefined();
    }
    expect(store.saves.atOnce).toBe(atOnce);
    expect(chats).toBeGreaterThan(12);
  } finally {
    await emu.close();
  }
  const saved = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'));
  expect(saved.workspaces.default.total_usage).toBeCloseTo(cost, 9);
  expect(readdirSync(dir).filter((n) => n.startsWith('charges'))).toEqual([]);
});
