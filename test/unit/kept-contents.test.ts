import { expect, it } from 'vitest';
import { KeptContents, type KeptContent } from '../../src/emulator/state/kept-contents.js';

const content = (completion: string): KeptContent => ({ workspace: 'w', asked: '{"messages":[]}', completion, reasoning: null, failedBy: undefined });

it('keeps the newest `limit`, the oldest out first, and finds an id kept again as its newest keep', () => {
  const kept = new KeptContents(3, 1000);
  for (const id of ['a', 'b', 'c', 'd']) kept.keep(id, content(`text of ${id}`), 10);
  expect(kept.get('a')).toBeUndefined();
  expect(kept.get('b')?.completion).toBe('text of b');
  expect(kept.get('d')).toEqual(content('text of d'));
  kept.keep('b', { ...content('b again'), failedBy: 'up' }, 10);
  expect(kept.get('b')).toMatchObject({ completion: 'b again', failedBy: 'up' });
  kept.keep('e', content('text of e'), 10);
  expect([kept.get('c'), kept.get('b')?.completion, kept.get('e')?.completion]).toEqual([undefined, 'b again', 'text of e']);
});

it('keeps at most `budget` bytes: the oldest go to make room; one larger than the budget is not kept and pushes none out', () => {
  const kept = new KeptContents(10, 100);
  kept.keep('a', content('a'), 40);
  kept.keep('b', content('b'), 40);
  kept.keep('huge', content('huge'), 101);
  expect(kept.get('huge')).toBeUndefined();
  expect(kept.get('a')).toBeDefined();
  kept.keep('c', content('c'), 40);
  expect(kept.get('a')).toBeUndefined();
  expect([kept.get('b')?.completion, kept.get('c')?.completion]).toEqual(['b', 'c']);
});

it('gives back each kept content as it came, the request kept as its bytes, null apart from empty, over many turns of its ring', () => {
  const kept = new KeptContents(50, 1e9);
  const asked = (i: number) => JSON.stringify({ messages: [{ role: 'user', content: `é✓ ${i} `.repeat(i % 40) }] });
  const said = (i: number) => (i % 5 === 0 ? null : i % 5 === 1 ? '' : `answer ✓ ${i}`.repeat(i % 30));
  for (let i = 0; i < 2_000; i++) kept.keep(`gen-${i}`, { workspace: `w${i % 3}`, asked: i % 2 ? Buffer.from(asked(i)) : asked(i), completion: said(i), reasoning: said(i + 1), failedBy: i % 7 ? undefined : 'up' }, 1);
  expect(kept.get('gen-1949')).toBeUndefined();
  for (let i = 1950; i < 2_000; i++) expect(kept.get(`gen-${i}`)).toEqual({ workspace: `w${i % 3}`, asked: asked(i), completion: said(i), reasoning: said(i + 1), failedBy: i % 7 ? undefined : 'up' });
});

it('keeps a request larger than its ring has grown whole, after many small ones', () => {
  // The newest thousand of 1,100 small requests, then prompts of 1 MiB (each twice: asked and answered).
  const kept = new KeptContents(1_000, 16 * 1024 * 1024);
  const keep = (id: string, text: string) => {
    const asked = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: text }] });
    kept.keep(id, { workspace: 'w', asked: Buffer.from(asked), completion: text, reasoning: null, failedBy: undefined }, asked.length + text.length);
    return asked;
  };
  for (let i = 0; i < 1_100; i++) keep(`gen-${i}-abcdefabcdefabcdefab`, 'x'.repeat(210));
  for (const n of [1, 2, 3]) {
    const text = 'y'.repeat(1 << 20);
    // Before: a RangeError from the ring (the request failed as its content was kept).
    const asked = keep(`big-${n}`, text);
    expect(kept.get(`big-${n}`)).toMatchObject({ asked, completion: text });
  }
});
