import { describe, expect, it } from 'vitest';
import { keyFormList, maskAnswer } from '../../src/emulator/providers/text-scrub.js';
import { tableOf } from '../../src/emulator/providers/form-ends.js';

// The strings and member names text-scrub.ts finds clean are kept with the forms' table, shared by every
// scrub of a gateway (each answer's `usage` names are then a set's look-up): an answer must come out of
// maskAnswer as it would with nothing known before it, whatever answers went first. Each answer is masked
// twice: with the shared list (warm from the answers before it) and with a list made anew (a cold table).
const KEYS = [`sk-or-v1-${'0123456789abcdef'.repeat(2)}`, 'AIzaSyD0123456789abcdefGHIJ'];
const SHARED = keyFormList(KEYS);
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A seeded generator: the same answers every run. */
function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => ((s = (s * 1103515245 + 12345) % 2 ** 31), s % n);
}

// Pieces of keys at every cut (a start at a string's end, its rest at the next's start), escapes, unicode, words.
const KEY = KEYS[0]!;
const PIECES = ['stop', 'assistant', 'hi', 'sk', 'sk-', 'sk-or-v1-', 'sk-or-v1-0123', KEY.slice(13), KEY.slice(9, 21), KEY.slice(20), 'AIzaSy', 'D0123456789ab', 'cdefGHIJ', KEY, 'é"\\\n', '🙂 sk-or-v1-01', 'x'.repeat(300), b64(`Bearer ${KEY}`).slice(0, 20), b64(`Bearer ${KEY}`).slice(20), ''];
const NAMES = ['id', 'model', 'prompt_tokens', 'cost', 'note', 'sk-or-v1-', '0123456789ab', 'AIzaSyD01', '23456789abcdef', 'é'];

function value(next: (n: number) => number, depth: number): unknown {
  const kind = next(depth > 2 ? 3 : 5);
  if (kind === 0) return next(1000) / 7;
  if (kind === 1 || kind === 2) return `${PIECES[next(PIECES.length)]}${next(3) ? '' : PIECES[next(PIECES.length)]}`;
  if (kind === 3) return Array.from({ length: next(4) }, () => value(next, depth + 1));
  return Object.fromEntries(Array.from({ length: next(5) }, () => [NAMES[next(NAMES.length)]!, value(next, depth + 1)]));
}

describe('maskAnswer with the clean strings and names kept across answers', () => {
  it('masks each answer as a scrub that knew nothing before it would', () => {
    const next = random(43);
    for (let round = 0; round < 3000; round++) {
      const answer = { id: `gen-${round}`, choices: [{ message: value(next, 0) }], usage: value(next, 0), extra: value(next, 0) };
      const text = JSON.stringify(answer);
      const cold = JSON.stringify(maskAnswer(JSON.parse(text), keyFormList(KEYS)));
      const warm = JSON.stringify(maskAnswer(JSON.parse(text), SHARED));
      if (warm !== cold) expect.fail(`${text}\n→ ${warm}\nnot ${cold}`);
    }
  });

  it('keeps a bounded set, and no long text alive', () => {
    for (let i = 0; i < 2000; i++) maskAnswer({ id: `gen-${i}`, content: `${'word '.repeat(60)}${i}` }, SHARED);
    const table = tableOf(SHARED);
    expect(table.cleanFields.size).toBeLessThanOrEqual(512);
    expect([...table.cleanFields].every((text) => text.length <= 200)).toBe(true);
  });
});
