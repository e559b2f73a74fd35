import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ChargeJournal } from '../../src/emulator/state/charge-journal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it("the timer's save removes the segments it holds off the event loop, and the next save holds on", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-journal-'));
  dirs.push(dir);
  const journal = new ChargeJournal(dir, 0);
  journal.append('default', 0.25);
  const first = journal.next();
  journal.append('default', 0.5);
  const removed = journal.savedLater(first, 1);
  // Not removed by the call itself (an unlink on the request path, ~10 a second under load)...
  expect(existsSync(join(dir, 'charges.1.jsonl'))).toBe(true);
  // ...but once it settles, as a save at once removes them at once.
  await removed;
  expect(readdirSync(dir)).toEqual(['charges.2.jsonl']);
  journal.saved(journal.next(), journal.seq);
  expect(readdirSync(dir)).toEqual([]);
  journal.close();
});
