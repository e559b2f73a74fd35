import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonTemplate } from '../../src/emulator/http/serialized.js';
import { chatCompletion, chatCompletionText, planChat } from '../../src/emulator/resources/chat.js';
import { countTokens, firstPieces, pieces, piecesOf } from '../../src/emulator/models/models.js';

describe('jsonTemplate', () => {
  it('writes the same text as JSON.stringify of the filled-in object', () => {
    const shape = (delta: unknown, seq: unknown) => ({ type: 'response.output_text.delta', item_id: 'msg_1', delta, logprobs: [], sequence_number: seq });
    const fill = jsonTemplate(shape, 2);
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('a', '"', '\\', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udc00', '\ud83d\ude00') })), fc.oneof(fc.nat(), fc.double(), fc.constantFrom(-0, 1e21, 5e-7, null, true), fc.string()), (delta, seq) => {
        expect(fill(delta, seq)).toBe(JSON.stringify(shape(delta, seq)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('chatCompletionText', () => {
  it('is JSON.stringify of chatCompletion for any chat request', () => {
    const body = fc.record(
      {
        model: fc.constantFrom('local/echo', 'local/lorem'),
        messages: fc.array(fc.record({ role: fc.constantFrom('user', 'system', 'assistant'), content: fc.string({ unit: 'binary' }) }), { minLength: 1, maxLength: 3 }),
        logprobs: fc.boolean(),
        top_logprobs: fc.integer({ min: 0, max: 3 }),
        service_tier: fc.constantFrom('auto', 'flex', 'priority', null),
        max_tokens: fc.integer({ min: 1, max: 50 }),
        stop: fc.array(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 2 }),
      },
      { requiredKeys: ['model', 'messages'] },
    );
    fc.assert(
      fc.property(body, fc.nat(), (b, created) => {
        const plan = planChat(b);
        expect(chatCompletionText(b, plan, created, { id: 'gen-1' })).toBe(JSON.stringify(chatCompletion(b, plan, created, { id: 'gen-1' })));
        expect(JSON.parse(chatCompletionText(b, plan, created, { id: 'gen-1', routerMetadata: { router: true, openrouter: false } })).router_metadata.requested).toBe(b.model);
      }),
      { numRuns: 300 },
    );
  });
});

describe('countTokens', () => {
  it('counts the pieces the tokenizer cuts, for any text', () => {
    const ascii = fc.string({ unit: fc.constantFrom('a', 'Z', '9', '_', ' ', '\t', '\n', '\r', '\v', '\f', '.', ',', '-', '\u0000', '\u001f', '\u007f') });
    fc.assert(
      fc.property(fc.oneof(ascii, fc.string({ unit: 'binary' }), fc.string()), (text) => {
        expect(countTokens(text)).toBe(pieces(text).length);
        // The pieces a stream sends, made one at a time.
        expect([...piecesOf({ text })]).toEqual(pieces(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('firstPieces is the first n pieces joined, for any text and n', () => {
    const ascii = fc.string({ unit: fc.constantFrom('a', '9', '_', ' ', '\t', '\n', '.', ',', '\u0000') });
    fc.assert(
      fc.property(fc.oneof(ascii, fc.string({ unit: 'binary' }), fc.string()), fc.nat(40), (text, n) => {
        expect(firstPieces(text, n)).toBe(n >= pieces(text).length ? text : pieces(text).slice(0, n).join(''));
      }),
      { numRuns: 2000 },
    );
  });
});
