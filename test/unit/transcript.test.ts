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
  t.addContent(big);
  expect((t as unknown as { said: string[] }).said.length).toBe(2 + CONTENT_BYTES / big.length);
});
