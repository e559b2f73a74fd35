import { describe, expect, it } from 'vitest';
import { makeKeyMark, markedKeysIn, readKeyMark, type KeyMark } from '../../src/internal/key-marks.js';
import { TextRedactor } from '../../src/internal/redact-text.js';
import { BytesRedactor } from '../../src/internal/redact-bytes.js';
import { MarkedKeys } from '../../src/internal/key-marks.js';

const KIND_KEY = `sk-or-v1-${'9c'.repeat(32)}`;
/** A key of no kind (a gateway's own, a hex token): found where a word starts. */
const BARE = 'Zq7uKd93mPx0aLw2Vn5bRt8yHc4eJs6f';
const mark = (key: string): KeyMark => readKeyMark(makeKeyMark(key))!;

describe('a key found by its mark', () => {
  it('whole, with a kind or none, wherever a word starts; not a key one character off', () => {
    const marks = [mark(KIND_KEY), mark(BARE)];
    expect(marks[0]!.kind).toBe('sk-or-v1-');
    expect(marks[1]!.kind).toBe('');
    expect(markedKeysIn(`a"${KIND_KEY}" b=${BARE}, Bearer ${BARE}x`, marks).sort()).toEqual([KIND_KEY, BARE].sort());
    expect(markedKeysIn(`${KIND_KEY.slice(0, -1)}0 ${BARE.slice(1)}`, marks)).toEqual([]);
    // No mark for what could not be found, or would hide words.
    expect(makeKeyMark('short')).toBeUndefined();
    expect(makeKeyMark('has a space in it')).toBeUndefined();
    expect(readKeyMark('sha256:8:sk-or-v1-:zz:00')).toBeUndefined();
  });

  it('split across a stream\'s pieces, text or bytes: never shown, nothing else held back past it', () => {
    for (const key of [KIND_KEY, BARE]) {
      const text = `first ${key} then ${key}.`;
      for (const at of [3, 8, 12, 20, text.length - 5]) {
        const secrets: string[] = [];
        const marked = new MarkedKeys((k) => secrets.push(k));
        marked.add([mark(key)]);
        const hide = new TextRedactor(secrets, marked);
        const shown = hide.push(text.slice(0, at)) + hide.push(text.slice(at)) + hide.end();
        expect(shown).toBe('first **** then ****.');
        const bytes = new BytesRedactor([], [mark(key)]);
        const body = Buffer.concat([bytes.push(Buffer.from(text.slice(0, at))), bytes.push(Buffer.from(text.slice(at))), bytes.end()]).toString();
        expect(body).toBe('first **** then ****.');
      }
    }
  });
});
