import { describe, expect, it, vi } from 'vitest';
import { ev, hostileGateway } from '../support/hostile-gateway.js';
import { FLAVORS, batchesPathOf } from '../support/batch-jobs.js';
import { SETTLE } from '../support/until.js';

// A provider key (the gateway's own upstream key, from api_key_env) that an upstream writes as a JSON member's name,
// not a string's value: a model asked for an object keyed by the credentials it was shown, an echo server's map of
// headers, a `metadata` object. Its start cut short (24 characters, 16 past its kind), or its start ending the name
// and its rest starting the value, never reach the caller (the bytes, not parsed), the request log or a cassette:
// a whole answer (chat, Responses, embeddings), a chat and a Responses stream, /v1/messages, a batch's results
// (both flavours). A failure says how many 8-character pieces of the key got out, never which.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
const SECRET = KEY.slice('sk-proj-'.length);
const START = KEY.slice(0, 24);
type Body = Record<string, unknown>;

/** How many 8 characters of the key past its kind `text` holds. */
const leaked = (text: string) => Array.from({ length: SECRET.length - 7 }, (_, i) => SECRET.slice(i, i + 8)).filter((piece) => text.includes(piece)).length;

/** The members an upstream names with the key: its start as a name, and a name ending with its start whose value goes on with it. */
const NAMED: [string, () => Body][] = [
  ["the key's start as a member's name", () => ({ [START]: 1 })],
  ["a name ending with the key's start, its value going on with the key", () => ({ [KEY.slice(0, 13)]: `${KEY.slice(13)} said` })],
];

const { willAnswer, raw, requestLog, tapesOf } = hostileGateway(KEY);
const chatAnswer = (extra: Body, content = 'ok') => JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], extra, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
const chunk = (d: Body, more: Body = {}, finish: string | null = null) => `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: d, finish_reason: finish }], ...more })}\n\n`;
const completed = (n: number, metadata: Body = {}) => ev({ type: 'response.completed', sequence_number: n, response: { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [], metadata } });

describe('a key as a JSON member name', () => {
  for (const [what, named] of NAMED) {
    it(`chat, whole: ${what}, at the top and deep; the request log and the cassette`, async () => {
      const asked = `whole named ${what.length}`;
      willAnswer({ body: chatAnswer({ a: named(), b: [{ deep: named() }] }) });
      const got = await raw('POST', '/v1/chat/completions', { model: 'test/m', messages: [{ role: 'user', content: asked }] });
      expect(got.status).toBe(200);
      expect(got.text.includes('[provider key]'), 'the mask in the answer').toBe(true);
      expect(leaked(got.text)).toBe(0);
      expect(leaked(await requestLog())).toBe(0);
      await vi.waitFor(() => expect(tapesOf(asked).includes('"extra"'), 'the cassette written').toBe(true), SETTLE);
      expect(leaked(tapesOf(asked))).toBe(0);
    });

    it(`chat, streamed: ${what}, in the chunk, its choice, its delta, a tool call; through /v1/messages too`, async () => {
      const events = [
        chunk({ role: 'assistant', content: 'hi', ...named() }),
        chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}', ...named() }, ...named() }] }, named()),
        `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop', ...named() }] })}\n\n`,
      ];
      willAnswer({ events });
      const got = await raw('POST', '/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: `stream named ${what.length}` }] });
      expect(got.text.includes('[DONE]'), 'the stream ended').toBe(true);
      expect(leaked(got.text)).toBe(0);
      expect(leaked(tapesOf(`stream named ${what.length}`))).toBe(0);
      willAnswer({ events });
      const messages = await raw('POST', '/v1/messages', { model: 'test/m', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(messages.text.includes('message_stop'), 'the stream ended').toBe(true);
      expect(leaked(messages.text)).toBe(0);
    });

    it(`Responses, streamed: ${what}, in a delta event and the final response's metadata`, async () => {
      willAnswer({ events: [ev({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'm1', output_index: 0, content_index: 0, delta: 'hi', ...named() }), completed(2, named())] });
      const got = await raw('POST', '/v1/responses', { model: 'test/m', stream: true, input: 'hi' });
      expect(got.text.includes('response.completed'), 'the stream ended').toBe(true);
      expect(leaked(got.text)).toBe(0);
    });

    it(`Responses and embeddings, whole: ${what}`, async () => {
      const output = [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }];
      willAnswer({ body: JSON.stringify({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output, metadata: named(), usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }) });
      const responses = await raw('POST', '/v1/responses', { model: 'test/m', input: 'hi' });
      expect(responses.status).toBe(200);
      expect(leaked(responses.text)).toBe(0);
      willAnswer({ body: JSON.stringify({ object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: [0.5], ...named() }], usage: { prompt_tokens: 1, total_tokens: 1 } }) });
      const embeddings = await raw('POST', '/v1/embeddings', { model: 'test/e', input: 'hi' });
      expect(embeddings.status).toBe(200);
      expect(leaked(embeddings.text)).toBe(0);
    });
  }
});

for (const flavor of FLAVORS) {
  describe(`a key as a JSON member name, in a batch's results (${flavor})`, () => {
    const gateway = hostileGateway(KEY, { batchDelayMs: 0, flavor });
    const path = batchesPathOf(flavor);

    for (const [what, named] of NAMED) {
      it(what, async () => {
        gateway.willAnswer({ body: chatAnswer(named(), 'said') });
        const text = await gateway.settledBatchText(path);
        expect(text.includes('said'), 'the answer in the results').toBe(true);
        expect(leaked(text)).toBe(0);
      });
    }
  });
}
