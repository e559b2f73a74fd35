import { describe, expect, it } from 'vitest';
import { LineIndex } from '../../src/emulator/state/line-index.js';
import { textHash } from '../../src/emulator/state/text-hash.js';

/** Two ids of the same hash. */
const [A, B] = ['gen-1079599', 'gen-1262382'];

/** An index over lines kept in memory: `at` is a line's number, in the current file or the older. */
function indexed(max: number) {
  const files = { current: new Map<number, string>(), older: new Map<number, string>() };
  let at = 0;
  const index = new LineIndex(max, (id, start, older) => (older ? files.older : files.current).get(start) === id);
  const keep = (id: string) => {
    files.current.set(++at, id);
    index.set(id, at);
  };
  const rotate = () => {
    files.older = files.current;
    files.current = new Map();
    index.rotate();
  };
  const lineOf = (id: string) => {
    let got: string | undefined;
    index.find(id, (start, older) => {
      if ((older ? files.older : files.current).get(start) !== id) return false;
      got = `${older ? 'older' : 'current'} ${start}`;
      return true;
    });
    return got;
  };
  const all = () => [...index.entries()].map(([start, older]) => (older ? files.older : files.current).get(start));
  return { index, keep, rotate, lineOf, all };
}

describe('where each line starts, by id', () => {
  it('finds the newest `max`, an id kept again as its newest line, two ids of one hash apart', () => {
    expect(textHash(A)).toBe(textHash(B));
    const { index, keep, lineOf, all } = indexed(3);
    keep(A);
    keep(B);
    expect([lineOf(A), lineOf(B)]).toEqual(['current 1', 'current 2']);
    keep(A);
    expect([lineOf(A), lineOf(B), index.size]).toEqual(['current 3', 'current 2', 2]);
    keep('c');
    keep('d');
    expect(all()).toEqual([A, 'c', 'd']);
    expect(lineOf(B)).toBeUndefined();
    index.delete(A);
    expect([lineOf(A), all()]).toEqual([undefined, ['c', 'd']]);
  });

  it('lets the older file\'s lines go when the current one becomes older, and keeps no more than `max` over many', () => {
    const { index, keep, rotate, lineOf, all } = indexed(4);
    for (const id of ['a', 'b', 'c']) keep(id);
    rotate();
    keep('d');
    expect([lineOf('a'), lineOf('d'), all()]).toEqual(['older 1', 'current 4', ['a', 'b', 'c', 'd']]);
    keep('e');
    expect(all()).toEqual(['b', 'c', 'd', 'e']);
    rotate();
    expect([lineOf('b'), lineOf('d'), all()]).toEqual([undefined, 'older 4', ['d', 'e']]);
    for (let n = 0; n < 10_000; n++) keep(`gen-${n % 7}`);
    expect(index.size).toBe(4);
    expect(all()).toEqual(['gen-0', 'gen-1', 'gen-2', 'gen-3']);
  });
});
