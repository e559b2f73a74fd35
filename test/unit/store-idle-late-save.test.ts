import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { StateStore } from '../../src/emulator/state/store.js';
import { storageHooks } from '../../src/emulator/state/fsutil.js';

// A stop waits for the store to be idle, closes it, and the caller may remove the folder. A timer's
// save begun while idle() waited (for a charge's journal line, a generation's record) was not waited
// for: it renamed state.json after the close, so the file read then lacked the charge (and the
// estimates a restart reads), and a folder removed then failed with ENOTEMPTY.
let dir: string;
let store: StateStore;

afterEach(() => {
  delete storageHooks.beforeLaterRename;
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a timer save begun while idle() waits is on disk when it settles; nothing is written after the close', async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-idle-late-save-'));
  store = new StateStore(dir);
  const { workspace } = store.createWorkspace('ws', 10);
  let renaming!: () => void;
  const atRename = new Promise<void>((resolve) => (renaming = resolve));
  storageHooks.beforeLaterRename = async () => renaming();
  store.debit(workspace.id, 1);
  const idle = store.idle();
  // The timer firing now, while idle() waits for the charge's journal line.
  (store as unknown as { saveWhenDue(): void }).saveWhenDue();
  await atRename;
  await idle;
  store.close();
  const saved = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { workspaces: Record<string, { total_usage: number }> };
  // Before: 0 (the save's rename still to come).
  expect(saved.workspaces.ws!.total_usage).toBe(1);
  expect(readdirSync(dir).filter((name) => name.includes('.later'))).toEqual([]);
});
