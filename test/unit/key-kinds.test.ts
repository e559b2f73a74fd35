import { describe, expect, it } from 'vitest';
import { hideSecrets, keyKind } from '../../src/internal/hide-secrets.js';
import { maskKeyStarts } from '../../src/emulator/providers/key-scrub.js';
import { keyFormList, TextScrub } from '../../src/emulator/providers/text-scrub.js';

// A key's kind is shown where the rest of it is hidden: it must be public, the start every key of that
// provider has, and nothing of the random part. Real-shaped keys of several providers (their random part
// base64url or hex, which can hold `-`, `_` and lower-case words) and a 2,000 of them at random: no
// character past the real kind gets out, cut short at a text's end, in its middle or at a stream's end.
const MASK = '[provider key]';
const bytes = seededBytes(11);
const randomBytes = (n: number): Buffer => bytes(n);
const REAL: [string, () => string][] = [
  ['sk-proj-', () => randomBytes(120).toString('base64url').slice(0, 156)],
  ['sk-svcacct-', () => randomBytes(120).toString('base64url').slice(0, 156)],
  ['sk-ant-api03-', () => `${randomBytes(72).toString('base64url').slice(0, 93)}AA`],
  ['sk-or-v1-', () => randomBytes(32).toString('hex')],
  ['sk-', () => randomBytes(36).toString('base64url')],
  ['gsk_', () => randomBytes(39).toString('base64url').slice(0, 52)],
  ['xai-', () => randomBytes(60).toString('base64url')],
];

/**
 * Seeded bytes for the keys (mulberry32): the same 2,000 keys every run. Drawn afresh each run, a run now and
 * then met a key whose random part repeats its kind right after a cut, where the stream's scrubber
 * hides the held kind too (more hidden, never less): a test that fails by chance says nothing.
 */
function seededBytes(seed: number): (n: number) => Buffer {
  let a = seed;
  const next = (): number => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % 256;
  };
  return (n) => Buffer.from(Array.from({ length: n }, next));
}

/** A seeded generator: the same cuts every run. */
function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => ((s = (s * 1103515245 + 12345) % 2 ** 31), s % n);
}

describe('a key\'s kind', () => {
  it('is the provider\'s known start, never a word of the random part', () => {
    expect(keyKind('sk-proj-ab3_Xy0123456789abcdefghij')).toBe('sk-proj-');
    expect(keyKind('sk-abcd-0123456789abcdefghij')).toBe('sk-');
    expect(keyKind('sk-ant-api03-abc_0123456789abcdefghij')).toBe('sk-ant-api03-');
    expect(keyKind('sk-or-v1-0123456789abcdef')).toBe('sk-or-v1-');
    expect(keyKind('gsk_ab_0123456789abcdef')).toBe('gsk_');
    // A key of no known kind has none: its first word may be as random as the rest.
    expect(keyKind('ab3_Xy0123456789abcdefghij')).toBe('');
    expect(keyKind('sk-')).toBe('');
  });

  it('2,000 random keys cut short past their kind, anywhere in a text or a stream: no secret character gets out', () => {
    const next = random(7);
    for (let i = 0; i < 2000; i++) {
      const [kind, rest] = REAL[i % REAL.length]!;
      const key = `${kind}${rest()}`;
      const least = Math.max(8, kind.length + 1);
      // Half of them cut within 12 characters of the kind, where a kind too long ended.
      const n = least + next(i % 2 ? 12 : key.length - least);
      const start = key.slice(0, n);
      // The CLI's own rule (hideSecrets): a start at a cut.
      const cli = hideSecrets(`my key: ${start}\n`, [key]);
      expect(cli, key).toBe('my key: ****\n');
      // The gateway's: a start anywhere (an upstream's words), in a stream's middle (in one piece, or its kind sent
      // before), a stream that ends on one.
      const forms = keyFormList([key]);
      expect(maskKeyStarts(`is ${start} and more`, forms), key).toBe(`is ${MASK} and more`);
      const scrub = new TextScrub(forms);
      let out = '';
      for (const piece of [`a ${start}`, ` b ${start}`, ' and more ', kind.slice(0, -1), `${start.slice(kind.length - 1)} c`, ` d ${start}`]) {
        out += scrub.needs('0.content', piece) ? scrub.piece('0.content', piece) : piece;
      }
      for (const held of scrub.release()) out += held.text;
      expect(out, key).toBe(`a ${MASK} b ${MASK} and more ${kind.slice(0, -1)}${MASK} c d ${kind}${MASK}`);
    }
  });
});
