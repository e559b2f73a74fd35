import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonTemplate } from '../../src/emulator/serialized.js';

describe('jsonTemplate', () => {
  it('writes the same text as JSON.stringify of the filled-in object', () => {
    const shape = (delta: unknown, seq: unknown) => ({ type: 'response.output_text.delta', item_id: 'msg_1', delta, logprobs: [], sequence_number: seq });
    const fill = jsonTemplate(shape, 2);
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.nat(), (delta, seq) => {
        expect(fill(delta, seq)).toBe(JSON.stringify(shape(delta, seq)));
      }),
      { numRuns: 300 },
    );
  });
});
