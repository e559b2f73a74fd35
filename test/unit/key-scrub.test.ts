import { describe, expect, it } from 'vitest';
import { KeyScrub, keyBytes, keyFormList, keyTexts } from '../../src/emulator/providers/key-scrub.js';
import { keyHider } from '../../src/emulator/routing/metadata.js';

const KEY = 'sk-provider-secret-0123456789abcdef';
const OTHER = 'sk-other-0123456789';
const text = `data: {"content":"a ${KEY} b sk-prov ${OTHER}${KEY} é"}\n\n`;
const hidden = 'data: {"content":"a [provider key] b sk-prov [provider key][provider key] é"}\n\n';

/** What the scrub passes on for `text` cut into these pieces. */
function through(pieces: Buffer[]): { out: string } {
  const scrub = new KeyScrub(keyBytes([KEY, OTHER, 'short']));
  const out = pieces.map((piece) => scrub.push(piece));
  out.push(scrub.end() ?? Buffer.alloc(0));
  return { out: Buffer.concat(out).toString() };
}

describe('KeyScrub', () => {
  it('hides every key, however the bytes are cut in two or three', () => {
    const bytes = Buffer.from(text);
    for (let i = 0; i <= bytes.length; i++) {
      expect(through([bytes.subarray(0, i), bytes.subarray(i)]).out).toBe(hidden);
      for (let j = i; j <= bytes.length; j += 7) expect(through([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]).out).toBe(hidden);
    }
  });

  it('holds nothing back of a read that ends an event, and gives back the same bytes when there is no key', () => {
    const scrub = new KeyScrub(keyBytes([KEY]));
    const event = Buffer.from('data: {"content":"sk-"}\n\n');
    expect(scrub.push(event)).toBe(event);
    expect(scrub.end()).toBeUndefined();
  });

  it('gives back, at the end, the start of a key that never came whole', () => {
    const scrub = new KeyScrub(keyBytes([KEY]));
    expect(scrub.push(Buffer.from('{"a":"sk-pro')).toString()).toBe('{"a":"');
    expect(scrub.end()!.toString()).toBe('sk-pro');
  });

  it('leaves keys shorter than 8 characters alone', () => {
    expect(keyBytes(['short', undefined, KEY, KEY])).toEqual(keyBytes([KEY]));
    expect(keyTexts(['short'])).toEqual([]);
    expect(keyTexts([KEY])).toContain(KEY);
  });
  it('hides the whole of a key another key begins, in whatever order they are configured', () => {
    const longer = `${KEY}-and-more-of-it`;
    for (const keys of [[KEY, longer], [longer, KEY]]) {
      const scrub = new KeyScrub(keyBytes(keys));
      const out = Buffer.concat([scrub.push(Buffer.from(`data: {"content":"${longer} and ${KEY}"}\n\n`)), scrub.end() ?? Buffer.alloc(0)]);
      expect(out.toString()).toBe('data: {"content":"[provider key] and [provider key]"}\n\n');
      // An upstream's words (a refusal) the same.
      expect(keyHider(keyFormList(keys))(`bad key ${longer}, not ${KEY}`)).toBe('bad key [provider key], not [provider key]');
    }
  });
});
