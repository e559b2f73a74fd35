import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArraySplitter } from '../../src/internal/json-split.js';
import { cutAt } from '../support/cut.js';

function split(text: string, target: string, cuts: number[] = []) {
  const elements: unknown[] = [];
  let keysBefore: string[] | undefined;
  const s = new ArraySplitter(target, (b) => elements.push(JSON.parse(b.toString('utf8'))), (k) => (keysBefore = k));
  for (const piece of cutAt(Buffer.from(text), cuts)) s.push(piece);
  return { rest: s.end(), elements, keysBefore, keys: s.keys };
}

describe('ArraySplitter', () => {
  it('splits the target array and keeps the rest', () => {
    const r = split('{"id":"b1","results":[{"a":"]}"},{"b":[1,{"c":2}]}],"x":{"results":[9]}}', 'results');
    expect(r.elements).toEqual([{ a: ']}' }, { b: [1, { c: 2 }] }]);
    expect(r.rest).toEqual({ id: 'b1', results: [], x: { results: [9] } });
    expect(r.keysBefore).toEqual(['id']);
  });

  it('handles primitives, escapes and an empty array', () => {
    expect(split('{"r":[1, "a\\"b" ,null,true]}', 'r').elements).toEqual([1, 'a"b', null, true]);
    expect(split('{"r":[],"k":"v"}', 'r')).toMatchObject({ elements: [], rest: { r: [], k: 'v' } });
    expect(split('{"k":"v","results":null}', 'results')).toMatchObject({ elements: [], rest: { results: null } });
  });

  it('gives the same answer for any chunking of any object', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 6 }),
        fc.dictionary(fc.string().filter((k) => k !== 'requests'), fc.jsonValue(), { maxKeys: 4 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (items, other, cuts) => {
          const obj = { ...other, requests: items };
          const r = split(JSON.stringify(obj), 'requests', cuts);
          expect(r.elements).toEqual(JSON.parse(JSON.stringify(items)));
          expect(r.rest).toEqual(JSON.parse(JSON.stringify({ ...other, requests: [] })));
        },
      ),
      { numRuns: 300 },
    );
  });
});
