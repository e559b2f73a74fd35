import { describe, expect, it } from 'vitest';
import { hostileGateway } from '../support/hostile-gateway.js';

// A key that a stream's text begins, another stream of the chunk goes on with past its kind (reasoning after content),
// and the next chunk's content finishes: its rest was masked, but not when a string between them (a chunk's ordinary
// system_fingerprint or id) ended with a form's first character: `fp_abc` ends with base64's `c` (`c2st…` of `sk-…`),
// `fp_abs` with the key's `s`. That string took the place of the key's start the reasoning ended with, and the
// caller got the key's rest (59 of its 64 secret characters, found through the installed gateway); so did another
// stream's text ending so (a refusal's `abc`). The caller's bytes never hold 8 characters of the secret, whatever is between.
const KEY = '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';
const SECRET = KEY.slice('sk-or-v1-'.length);
type Body = Record<string, unknown>;
const { willAnswer, raw } = hostileGateway(KEY);

const piecesIn = (text: string) => Array.from({ length: SECRET.length - 7 }, (_, i) => SECRET.slice(i, i + 8)).filter((piece) => text.includes(piece));
const chunk = (delta: Body, more: Body = {}, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...more })}\n\n`;

/** The key's start in content, a character at a time; more of it in reasoning; its rest in content beside `more`. */
const events = (at: number, more: Body) => [
  chunk({ role: 'assistant', content: '' }),
  ...[...`a ${KEY.slice(0, at)}`].map((c) => chunk({ content: c })),
  chunk({ reasoning: KEY.slice(at, at + 6) }),
  chunk({ content: `${KEY.slice(at + 6)} b` }, more),
  chunk({}, {}, 'stop'),
];

/** The key's start in content, more of it in reasoning, another stream's text ending with a form's first character, its rest in content. */
const streamBetween = (at: number, between: string) => [
  chunk({ role: 'assistant', content: `a ${KEY.slice(0, at)}` }),
  chunk({ reasoning: KEY.slice(at, at + 6) }),
  chunk({ refusal: between }),
  chunk({ content: `${KEY.slice(at + 6)} b` }),
  chunk({}, {}, 'stop'),
];

describe('a key begun in one stream and finished in another, a string between them', () => {
  it.each([
    ["a refusal ending with base64's first character", (at: number) => streamBetween(at, 'abc')],
    ["a refusal ending with the key's first character", (at: number) => streamBetween(at, 'abs')],
    ["a tool call's arguments, then a reasoning ending so, then the content", (at: number) => [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: `{"a":"${KEY.slice(0, at)}` } }] }),
      chunk({ reasoning: 'thinking c' }),
      chunk({ content: `${KEY.slice(at)}"}` }),
      chunk({}, {}, 'stop'),
    ]],
  ])('%s: no piece of the key reaches the caller', async (_what, stream) => {
    for (const at of [8, 9, 12, 20]) {
      willAnswer({ events: stream(at) });
      const got = await raw('POST', '/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(piecesIn(got.text), `split at ${at}`).toEqual([]);
    }
  });

  it.each([
    ['no string between', {}],
    ["a fingerprint ending with base64's first character", { system_fingerprint: 'fp_abc' }],
    ["a fingerprint ending with the key's first character", { system_fingerprint: 'fp_abs' }],
    ["a fingerprint that is the key's kind", { system_fingerprint: 'sk-or-v1-' }],
    ["a chunk's id ending with base64's first character", { id: 'gen-xyzc' }],
  ])('%s: no piece of the key reaches the caller', async (_what, more) => {
    for (const at of [8, 9, 12]) {
      willAnswer({ events: events(at, more) });
      const got = await raw('POST', '/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(got.status).toBe(200);
      expect(got.text).toContain('[DONE]');
      expect(piecesIn(got.text), `split at ${at}`).toEqual([]);
    }
  });
});
