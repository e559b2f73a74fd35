import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ChargeJournal } from '../../src/emulator/state/charge-journal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('a charge after a line a crash left torn starts a line of its own, and is replayed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-journal-'));
  dirs.push(dir);
  const file = join(dir, 'charges.jsonl');
  writeFileSync(file, '{"s":1,"w":"default","c":0.25}\n{"s":2,"w":"def');
  const journal = new ChargeJournal(dir, 0);
  expect(journal.unsaved().map((e) => e.c)).toEqual([0.25]); // as a start does, before any charge
  journal.append('default', 0.5);
  journal.close();
  expect(readFileSync(file, 'utf8').split('\n').at(-2)).toMatch(/^\{"s":\d+,"w":"default","c":0.5\}$/);
  const replayed = new ChargeJournal(dir, 0).unsaved();
  expect(replayed.map((e) => e.c)).toEqual([0.25, 0.5]);
});
