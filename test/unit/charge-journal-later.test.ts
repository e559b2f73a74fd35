import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

it("a timer's switch opens the segment it moves to, and the next, off the event loop: their first lines go there", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-journal-'));
  dirs.push(dir);
  const journal = new ChargeJournal(dir, 0);
  journal.append('default', 0.25);
  expect(journal.next(true)).toBe(2);
  await journal.opening;
  // Created before any line came (before, the first line opened its segment, on the event loop).
  expect(readdirSync(dir).sort()).toEqual(['charges.1.jsonl', 'charges.2.jsonl', 'charges.3.jsonl']);
  expect(readFileSync(join(dir, 'charges.2.jsonl'), 'utf8')).toBe('');
  journal.append('default', 0.5);
  journal.flush(); // as an answer's end does first
  expect(readFileSync(join(dir, 'charges.2.jsonl'), 'utf8')).toBe('{"s":2,"w":"default","c":0.5}\n');
  expect(journal.next(true)).toBe(3);
  journal.append('default', 1);
  journal.flush();
  expect(readFileSync(join(dir, 'charges.3.jsonl'), 'utf8')).toBe('{"s":3,"w":"default","c":1}\n');
  await journal.opening;
  journal.close();
  // The one opened after it, never written, is gone.
  expect(readdirSync(dir).sort()).toEqual(['charges.1.jsonl', 'charges.2.jsonl', 'charges.3.jsonl']);
});

it('a segment opened ahead that no line came to is gone at the close, opened or still opening', async () => {
  for (const waited of [true, false]) {
    const dir = mkdtempSync(join(tmpdir(), 'router-journal-'));
    dirs.push(dir);
    const journal = new ChargeJournal(dir, 0);
    journal.append('default', 0.25);
    journal.next(true);
    if (waited) await journal.opening;
    // No line since the switch: the next save does not switch again (nor open another).
    expect(journal.next(true)).toBe(2);
    journal.saved(2, journal.seq);
    journal.close();
    await journal.opening;
    expect(readdirSync(dir)).toEqual([]);
  }
});

it("a turn's charges wait to go in one write(2): made by the first answer to end, else by the turn's end; a switch writes its segment's first", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-journal-'));
  dirs.push(dir);
  const file = (n: number) => readFileSync(join(dir, `charges.${n}.jsonl`), 'utf8');
  const journal = new ChargeJournal(dir, 0);
  journal.append('default', 0.25);
  journal.append('default', 0.5);
  expect(file(1)).toBe('');
  journal.append('default', 1);
  journal.flush(); // an answer's end
  expect(file(1)).toBe('{"s":1,"w":"default","c":0.25}\n{"s":2,"w":"default","c":0.5}\n{"s":3,"w":"default","c":1}\n');
  // One no answer waits for is written once the loop's turn is over.
  journal.append('default', 2);
  expect(file(1)).not.toContain('"s":4');
  await new Promise((r) => setImmediate(r));
  expect(file(1)).toMatch(/\{"s":4,"w":"default","c":2\}\n$/);
  // A switch with lines still to be written: they go to the segment they were made in, in order.
  journal.append('default', 3);
  expect(journal.next()).toBe(2);
  journal.append('default', 4);
  expect(file(1)).toMatch(/\{"s":4,"w":"default","c":2\}\n\{"s":5,"w":"default","c":3\}\n$/);
  journal.flush();
  expect(file(2)).toBe('{"s":6,"w":"default","c":4}\n');
  journal.close();
});
