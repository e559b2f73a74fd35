import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readLines } from '../../src/cli/jsonl.js';
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
