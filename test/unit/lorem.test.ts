import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countTokens, generate, MODELS, pieces, piecesOf } from '../../src/emulator/models/models.js';

const lorem = MODELS.find((m) => m.id === 'local/lorem')!;

describe('local/lorem', () => {
  it('hands out the pieces its text splits into, and the same answer as the general path (taken under a stop that never matches)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 3000 }), fc.option(fc.integer({ min: 1, max: 4000 }), { nil: undefined }), fc.integer(), (words, maxTokens, seed) => {
        const prompt = `write ${words} words`;
        const fast = generate(lorem, `user: ${prompt}`, prompt, { maxTokens, seed });
        const general = generate(lorem, `user: ${prompt}`, prompt, { maxTokens, seed, stop: ['never in lorem'] });
        expect([...piecesOf(fast)]).toEqual(pieces(fast.text));
        expect([...piecesOf(general)]).toEqual(pieces(general.text));
        expect(fast.completionTokens).toBe(countTokens(fast.text));
        expect(general.pieces).toBeUndefined();
        expect({ ...fast, pieces: undefined }).toEqual({ ...general, pieces: undefined });
      }),
      { numRuns: 200 },
    );
  });

  it('cuts a long answer at the model maximum', () => {
    const gen = generate(lorem, 'user: write 300000 words', 'write 300000 words', {});
    expect(gen).toMatchObject({ finishReason: 'length', completionTokens: lorem.maxOutputTokens });
    expect([...piecesOf(gen)]).toHaveLength(lorem.maxOutputTokens!);
  });

  it('writes "N more words" as N words (the README\'s follow-up, `router chat -c "write 6 more words"`)', () => {
    const words = (ask: string) => generate(lorem, `user: ${ask}`, ask, {}).text.split(/\s+/).filter(Boolean).length;
    expect(words('write 6 more words')).toBe(6);
    expect(words('write 6 words')).toBe(6);
  });
});
