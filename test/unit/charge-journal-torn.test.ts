import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ChargeJournal } from '../../src/emulator/state/charge-journal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('a charge after a line a crash left torn goes to a segment of its own, and both are replayed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-journal-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'charges.1.jsonl'), '{"s":1,"w":"default","c":0.25}\n{"s":2,"w":"def');
  const journal = new ChargeJournal(dir, 0);
  expect(journal.unsaved().map((e) => e.c)).toEqual([0.25]); // as a start does, before any charge
  journal.append('default', 0.5);
  journal.flush(); // as a stop does (store.idle())
  journal.close();
  expect(readFileSync(join(dir, 'charges.2.jsonl'), 'utf8')).toMatch(/^\{"s":2,"w":"default","c":0.5\}\n$/);
  const replayed = new ChargeJournal(dir, 0).unsaved();
  expect(replayed.map((e) => e.c)).toEqual([0.25, 0.5]);
});

it('reads the single charges.jsonl of an older version as the first segment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-journal-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'charges.jsonl'), '{"s":4,"w":"default","c":0.25}\n{"s":5,"w":"default","c":0.5}\n');
  writeFileSync(join(dir, 'charges.1.jsonl'), '{"s":6,"w":"default","c":1}\n');
  // state.json holds up to 4: the rest, in order, once.
  expect(new ChargeJournal(dir, 4).unsaved().map((e) => e.c)).toEqual([0.5, 1]);
  const journal = new ChargeJournal(dir, 4);
  journal.unsaved();
  journal.saved(journal.next(), journal.seq);
  expect(readdirSync(dir)).toEqual([]);
});
