import { describe, expect, it } from 'vitest';
import { keyFormList, TextScrub } from '../../src/emulator/providers/text-scrub.js';

// TextScrub's rule (text-scrub.ts) over texts cut at random into a stream's pieces: a form of a key is
// never joined whole, nor more of its start than its open start (its kind) while it can still be
// finished; a text with no key comes out as it went in, nothing held, lost or moved.
const KEYS = [`sk-or-v1-${'0123456789abcdef'.repeat(2)}`, 'AIzaSyD0123456789abcdefGHIJ', 'other/key+0123456789=abcdefXYZ'];
const FORMS = keyFormList(KEYS);
const MASK = '[provider key]';
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A seeded generator: the same texts and cuts every run. */
function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => ((s = (s * 1103515245 + 12345) % 2 ** 31), s % n);
}

const WORDS = [' risks', ' ask', ' sk', ' sk-', ' sk-or', ' sk-or-v1-', ' AI', ' other', ' c2st', ' QmVhcmVy', ' black-', ' done', ' A'];
const SECRETS = [KEYS[0]!, KEYS[1]!, encodeURIComponent(KEYS[2]!), b64(`Bearer ${KEYS[0]}`), b64(`me:${KEYS[1]}`)];

/** The stream's text as the caller joins it: each piece as needs()/piece() let it go, what is held given back at the end. */
function through(pieces: string[]): { out: string; held: number } {
  const scrub = new TextScrub(FORMS);
  let out = '';
  let held = 0;
  for (const piece of pieces) {
    const next = scrub.needs('0.content', piece) ? scrub.piece('0.content', piece) : piece;
    if (next !== piece) held++;
    out += next;
  }
  for (const rest of scrub.release()) out += rest.text;
  return { out, held };
}

describe('TextScrub', () => {
  it('each form\'s open start: the kind, or the base64 characters its bits alone make; none without a kind', () => {
    const open = new Map(FORMS.map((f) => [f.text, f.open]));
    expect([open.get(KEYS[0]!), open.get(KEYS[1]!), open.get(KEYS[2]!)]).toEqual(['sk-or-v1-'.length, 0, 0]);
    // Another key of the kind: each form's open start the same characters (they tell nothing of the key), the base64
    // runs' 12 (the key at a multiple of 3 bytes) or 11 (its first character shares bits with the byte before).
    const other = keyFormList([`sk-or-v1-${'fedcba9876543210'.repeat(2)}`]);
    const mine = keyFormList([KEYS[0]]);
    expect(mine.map((f) => f.open).sort((a, b) => a - b)).toEqual([9, 11, 11, 12]);
    mine.forEach((form, i) => expect(form.text.slice(0, form.open)).toBe(other[i]!.text.slice(0, other[i]!.open)));
  });

  it('never joins a form whole, at any cut of texts holding keys; a text without one comes out whole, nothing held', () => {
    const next = random(7);
    for (let round = 0; round < 1500; round++) {
      const parts = Array.from({ length: 2 + next(5) }, () => (next(4) ? WORDS[next(WORDS.length)]! : ` ${SECRETS[next(SECRETS.length)]!}`));
      const text = parts.join('');
      const cuts = [...new Set(Array.from({ length: 1 + next(6) }, () => next(text.length)))].sort((a, b) => a - b);
      const pieces = [0, ...cuts].map((at, i) => text.slice(at, [...cuts, text.length][i]));
      const { out, held } = through(pieces);
      const keyed = FORMS.some((f) => text.includes(f.text));
      if (FORMS.some((form) => out.includes(form.text))) expect.fail(`${JSON.stringify(pieces)} → ${out}`);
      if (!keyed) expect({ out, held }).toEqual({ out: text, held: 0 });
      else expect(out).toContain(MASK);
    }
  });

  it('passes ordinary ends as they are: a start no longer than the kind is kept, not held', () => {
    const scrub = new TextScrub(FORMS);
    for (const piece of ['It', ' risks', ' ask', ' sk-', 'or-v1-']) expect(scrub.needs('0.content', piece)).toBe(false);
    expect(scrub.needs('0.content', '0')).toBe(true);
    expect(scrub.piece('0.content', `0${KEYS[0]!.slice(10)} ok`)).toBe(`${MASK} ok`);
  });

  it('two keys of a kind, one beginning the other, one holding its kind again: no 8 characters past the kind get out', () => {
    const long = `sk-or-v1-${'0123456789abcdef'.repeat(2)}`;
    const keys = [long, long.slice(0, 25), 'sk-or-v1-fedcsk-or-v1-ba9876543210fedc', 'NOKINDKEY0123456789XYZ'];
    const forms = keyFormList(keys);
    const words = [' sk', ' sk-', ' sk-or-v1-', ' NOK', ' a', ' 0123', ' fedc', ' -'];
    const next = random(11);
    for (let round = 0; round < 3000; round++) {
      const text = Array.from({ length: 2 + next(5) }, () => (next(3) ? words[next(words.length)]! : ` ${keys[next(keys.length)]!}`)).join('');
      const cuts = [...new Set(Array.from({ length: 1 + next(8) }, () => next(text.length)))].sort((a, b) => a - b);
      const pieces = [0, ...cuts].map((at, i) => text.slice(at, [...cuts, text.length][i]));
      const scrub = new TextScrub(forms);
      let out = '';
      for (const piece of pieces) out += scrub.needs('0.content', piece) ? scrub.piece('0.content', piece) : piece;
      for (const rest of scrub.release()) out += rest.text;
      for (const key of keys) {
        const kind = key.startsWith('sk-or-v1-') ? 9 : 0;
        for (let at = kind; at + 8 <= key.length; at++) if (out.includes(key.slice(at, at + 8)) && !words.some((w) => w.includes(key.slice(at, at + 8)))) expect.fail(`${JSON.stringify(pieces)} → ${out}`);
      }
    }
  });
});
