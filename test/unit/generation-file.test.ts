import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GenerationFile } from '../../src/emulator/state/generation-file.js';

const dir = mkdtempSync(join(tmpdir(), 'router-generation-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kept = (n: number) => ({ workspace: 'default', data: { id: `gen-${n}`, total_cost: n } });

describe('the generations file', () => {
  it('keeps the newest over a restart, in two files of at most `limit` lines, skipping a line cut short', () => {
    const log = new GenerationFile(dir, 3);
    for (let n = 1; n <= 7; n++) {
      log.keep(`gen-${n}`, kept(n));
      log.flush();
    }
    // Without a restart: the newest 3, the one before them let go (read back from both files).
    expect([7, 6, 5, 4].map((n) => log.get(`gen-${n}`))).toEqual([kept(7), kept(6), kept(5), undefined]);
    log.end();
    expect(readFileSync(join(dir, 'generations.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(readFileSync(join(dir, 'generations.old.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
    appendFileSync(join(dir, 'generations.jsonl'), '{"id":"gen-8","workspa');
    const again = new GenerationFile(dir, 3);
    expect(again.get('gen-7')).toEqual(kept(7));
    expect(again.get('gen-5')).toEqual(kept(5));
    expect(again.get('gen-4')).toBeUndefined();
    expect(again.get('gen-8')).toBeUndefined();
    again.end();
    // Ended: nothing more is written (the state folder may be gone).
    again.keep('gen-9', kept(9));
    again.flush();
    expect(readFileSync(join(dir, 'generations.jsonl'), 'utf8')).not.toContain('gen-9');
    expect(existsSync(join(dir, 'generations.jsonl'))).toBe(true);
  });

  it('a generation kept after a restart that found a line cut short is found after the next', () => {
    const folder = mkdtempSync(join(dir, 'torn-'));
    appendFileSync(join(folder, 'generations.jsonl'), `${JSON.stringify({ id: 'gen-1', ...kept(1) })}\n{"id":"gen-2","workspa`);
    const log = new GenerationFile(folder, 10);
    log.keep('gen-3', kept(3));
    log.flush();
    // Its line starts after the newline that ends the cut one.
    expect(log.get('gen-3')).toEqual(kept(3));
    log.end();
    const again = new GenerationFile(folder, 10);
    expect(again.get('gen-1')).toEqual(kept(1));
    // Before: its line was written onto the cut one, and both were lost.
    expect(again.get('gen-3')).toEqual(kept(3));
    again.end();
  });

  it('keeps in memory only where each line starts: a generation is read back from the file', () => {
    const folder = mkdtempSync(join(dir, 'index-'));
    const log = new GenerationFile(folder, 10);
    // Offsets in bytes: a line of characters of two, three and four bytes before the next.
    const wide = { workspace: 'default', data: { id: 'gen-1', note: 'é – 😀'.repeat(500) } };
    log.keep('gen-1', wide);
    log.keep('gen-2', kept(2));
    // Not yet written: found all the same.
    expect(log.get('gen-2')).toEqual(kept(2));
    log.flush();
    log.keep('gen-2', kept(22));
    log.flush();
    expect(log.get('gen-1')).toEqual(wide);
    // Kept again: the newest line is the one found.
    expect(log.get('gen-2')).toEqual(kept(22));
    expect(log.get('gen-3')).toBeUndefined();
    // What is answered is the file's line (before: a record kept in memory for each generation).
    const file = join(folder, 'generations.jsonl');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"total_cost":22', '"total_cost":33'));
    expect(log.get('gen-2')).toEqual({ workspace: 'default', data: { id: 'gen-22', total_cost: 33 } });
    log.end();
  });
  it('writes off the event loop: a generation is found while its write is under way, on disk once idle() settles, and an end during it ends after it', async () => {
    const folder = mkdtempSync(join(dir, 'later-'));
    const file = join(folder, 'generations.jsonl');
    const log = new GenerationFile(folder, 10);
    log.keep('gen-1', kept(1));
    const writing = log.idle();
    // Before: written with writeSync at the turn's end, every open answer waiting for it.
    expect(writing).toBeInstanceOf(Promise);
    expect(log.get('gen-1')).toEqual(kept(1));
    expect([...log.all()]).toEqual([{ ...kept(1), key: undefined, batch: undefined }]);
    log.keep('gen-2', kept(2));
    log.end();
    await writing;
    expect(readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line).id)).toEqual(['gen-1', 'gen-2']);
    const again = new GenerationFile(folder, 10);
    expect([again.get('gen-1'), again.get('gen-2')]).toEqual([kept(1), kept(2)]);
    expect(again.idle()).toBeUndefined();
    again.end();
  });
});
