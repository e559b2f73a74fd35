import { expect, it } from 'vitest';
import { Transcript } from '../../src/emulator/routing/transcript.js';
import { CONTENT_BYTES } from '../../src/emulator/resources/generation-content.js';

it('gathers a stream’s content and reasoning, and nothing once past what generation content stores', () => {
  const t = new Transcript();
  t.add({ role: 'assistant' });
  t.add({ reasoning: 'hmm ' });
  t.add({ content: 'he' });
  t.addContent('llo');
  t.add(null);
  expect(t.text()).toEqual({ completion: 'hello', reasoning: 'hmm ' });
  const big = 'x'.repeat(1024 * 1024);
  for (let i = 0; i <= CONTENT_BYTES / big.length; i++) t.addContent(big);
  // Past the bound: not kept (as keepContent would drop it), and it stops growing.
  expect(t.text()).toBeUndefined();
  const held = t.held;
  // UTF-16: two bytes a character, the content's and the reasoning's (256 here).
  expect(held).toBeLessThanOrEqual(2 * CONTENT_BYTES + 256);
  t.addContent(big);
  expect(t.held).toBe(held);
});

it('joins a surrogate pair split across two pieces, as the caller’s client does', () => {
  const t = new Transcript();
  t.addContent('smile \ud83d');
  t.addContent('\ude00 ok');
  t.add({ reasoning: '\u00e9t\u00e9 ' });
  expect(t.text()).toEqual({ completion: 'smile \u{1f600} ok', reasoning: '\u00e9t\u00e9 ' });
});
