import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tempFolder } from '../support/temp-folder.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLines, scanLines, type Line } from '../../src/internal/jsonl.js';
import { cutAt } from '../support/cut.js';

async function lines(chunks: Buffer[]) {
  const out: string[] = [];
  for await (const l of readLines((async function* () { yield* chunks; })())) out.push(l.bytes.toString('utf8'));
  return out;
}

describe('readLines', () => {
  it('never loses or duplicates a line, whatever the chunking, with LF or CRLF and UTF-8 split anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '')), { minLength: 1, maxLength: 10 }),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (ls, eol, trailing, cuts) => {
          const text = ls.join(eol) + (trailing ? eol : '');
          const got = await lines(cutAt(Buffer.from(text), cuts));
          const expected = trailing || ls.at(-1) !== '' ? ls : ls.slice(0, -1);
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('numbers lines from 1 and strips a BOM', async () => {
    const out = [];
    for await (const l of readLines((async function* () { yield Buffer.from('\ufeffa\nb\n'); })())) out.push([l.number, l.bytes.toString()]);
    expect(out).toEqual([[1, 'a'], [2, 'b']]);
  });

  it('keeps a huge line whole', async () => {
    const big = 'x'.repeat(3_000_000);
    expect((await lines(cutAt(Buffer.from(`${big}\nend\n`), [5, 1_000_000, 2_999_999])))).toEqual([big, 'end']);
  });

  it('passes invalid UTF-8 through as bytes (JSON.parse then reports the line)', async () => {
    const got = [];
    for await (const l of readLines((async function* () { yield Buffer.from([0xff, 0x0a, 0x41]); })())) got.push([...l.bytes]);
    expect(got).toEqual([[0xff], [0x41]]);
  });
});

describe('scanLines (one buffer, read into again)', () => {
  const folder = tempFolder('router-scanlines-');
  const copy = (l: Line) => ({ number: l.number, bytes: [...l.bytes], next: l.next });

  it('gives the lines, numbers and offsets readLines gives, for any bytes and any buffer size', async () => {
    const file = join(folder(), 'in.jsonl');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constantFrom(10, 13, 0xef, 0xbb, 0xbf), fc.integer({ min: 0, max: 255 })), { maxLength: 300 }),
        fc.integer({ min: 1, max: 64 }),
        async (bytes, bufferBytes) => {
          writeFileSync(file, Buffer.from(bytes));
          const want = [];
          for await (const l of readLines(file)) want.push(copy(l));
          const got = [];
          const read: Buffer[] = [];
          for await (const l of scanLines(file, { bufferBytes, onRead: (b) => read.push(Buffer.from(b)) })) got.push(copy(l));
          expect(got).toEqual(want);
          expect(Buffer.concat(read)).toEqual(Buffer.from(bytes));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('strips a BOM from the first line only, and keeps a line longer than its buffer whole', async () => {
    const file = join(folder(), 'bom.jsonl');
    const big = 'x'.repeat(100_000);
    writeFileSync(file, `\ufeffa\r\n\ufeffb\n${big}\nend`);
    const got = [];
    for await (const l of scanLines(file, { bufferBytes: 7 })) got.push(l.bytes.toString());
    expect(got).toEqual(['a', '\ufeffb', big, 'end']);
  });
});
