import { describe, expect, it } from 'vitest';
import { ev, hostileGateway, type HostileAnswer } from '../support/hostile-gateway.js';

// A provider key (the gateway's own upstream key, from api_key_env) that a hostile upstream splits between two
// strings that are not one stream's text: its start ends one (a chunk's id, its system_fingerprint, a content, a
// Responses delta, its item_id, an `obfuscation`), its rest starts the next (a tool call's id, a content, an
// `obfuscation`, a delta). Each string alone holds no key's start past its kind; joined, the caller would read the
// key. The caller's bytes, as they came (not parsed), never hold the key nor 8 characters of it past its kind, split
// at the kind, before it, or past it; through the openai SDK too.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
const SECRET = KEY.slice('sk-proj-'.length);
type Body = Record<string, unknown>;
const { willAnswer, client, raw, requestLog } = hostileGateway(KEY);

/** Each 8 characters of the key past its kind that `text` holds (none, when nothing of the secret got out). */
const piecesIn = (text: string) => Array.from({ length: SECRET.length - 7 }, (_, i) => SECRET.slice(i, i + 8)).filter((piece) => text.includes(piece));

/** The key cut in two: before its kind ends, at it, past it (each start alone under 8 characters past the kind). */
const SPLITS = [3, 8, 13].map((at) => [KEY.slice(0, at), KEY.slice(at)] as const);

const chunk = (choices: Body[], before: Body = {}, after: Body = {}) => `data: ${JSON.stringify({ id: 'gen-1', object: 'chat.completion.chunk', created: 1, model: 'm', ...before, choices, ...after })}\n\n`;
const choice = (delta: Body, finish: string | null = null) => ({ index: 0, delta, finish_reason: finish });
const call = (id: string, args = '{}') => ({ tool_calls: [{ index: 0, id, type: 'function', function: { name: 'f', arguments: args } }] });
const end = chunk([choice({}, 'stop')]);
const delta = (d: string, n: number, more: Body = {}) => ev({ type: 'response.output_text.delta', sequence_number: n, item_id: 'm1', output_index: 0, content_index: 0, delta: d, ...more });
const completed = (n: number) => ev({ type: 'response.completed', sequence_number: n, response: { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [] } });

const CHAT: [string, (start: string, rest: string) => string[]][] = [
  ["a chunk's id, then a tool call's id", (s, r) => [chunk([choice({ role: 'assistant', ...call(r) })], { id: `gen-${s}` }), end]],
  ['a system_fingerprint, then the content', (s, r) => [chunk([choice({ role: 'assistant', content: `${r} said` })], { system_fingerprint: `fp_${s}` }), end]],
  ["the content, then the next chunk's tool call id", (s, r) => [chunk([choice({ role: 'assistant', content: `see ${s}` })]), chunk([choice(call(r))]), end]],
  ["the content, then the next chunk's obfuscation", (s, r) => [chunk([choice({ role: 'assistant', content: `see ${s}` })]), chunk([choice({ content: ' ok' })], {}, { obfuscation: r }), end]],
  ["a plain chunk's system_fingerprint (after plain ones), then its content", (s, r) => [chunk([choice({ role: 'assistant', content: 'one' })]), chunk([choice({ content: ' two' })]), chunk([choice({ content: r })], { system_fingerprint: `fp_${s}` }), end]],
  ["a tool call's id, then its arguments", (s, r) => [chunk([choice({ role: 'assistant', ...call(`call_${s}`, r) })]), end]],
];

const RESPONSES: [string, (start: string, rest: string) => string[]][] = [
  ["a delta's text, then its obfuscation", (s, r) => [delta(`hello ${s}`, 1, { obfuscation: r }), completed(2)]],
  ["a delta's item_id, then its text", (s, r) => [delta(`${r} said`, 1, { item_id: `msg_${s}` }), completed(2)]],
  ["a delta's obfuscation, then the next delta's text", (s, r) => [delta('hello', 1, { obfuscation: `x${s}` }), delta(r, 2), completed(3)]],
];

const whole = (body: Body): HostileAnswer => ({ body: JSON.stringify(body) });
const chatAnswer = (id: string, content: string, more: Body = {}) => whole({ id, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], ...more, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

describe('a key split between two strings of a stream that are no one text', () => {
  for (const [what, events] of CHAT) {
    it(`chat: ${what}`, async () => {
      for (const [start, rest] of SPLITS) {
        willAnswer({ events: events(start, rest) });
        const got = await raw('POST', '/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: 'hi' }] });
        expect(got.status).toBe(200);
        expect(got.text).toContain('[DONE]');
        expect(piecesIn(got.text), `split at ${start.length}`).toEqual([]);
      }
    });
  }

  it('chat, through the openai SDK: every chunk it gives, as JSON; the request log once it goes on with the tool call', async () => {
    for (const [start, rest] of SPLITS) {
      willAnswer({ events: CHAT[0]![1](start, rest) });
      const parts: string[] = [];
      let callId = '';
      for await (const part of await client().chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'hi' }] })) {
        parts.push(JSON.stringify(part));
        callId ||= part.choices[0]?.delta?.tool_calls?.[0]?.id ?? '';
      }
      expect(parts.join('\n')).toContain('tool_calls');
      expect(piecesIn(parts.join('\n'))).toEqual([]);
      // The caller sends back the call's id as it got it: the request log keeps what the caller sent.
      willAnswer(chatAnswer('c2', 'done'));
      const tool_calls = [{ id: callId, type: 'function' as const, function: { name: 'f', arguments: '{}' } }];
      await client().chat.completions.create({ model: 'test/m', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', tool_calls }, { role: 'tool', tool_call_id: callId, content: 'ok' }] });
      expect(piecesIn(await requestLog())).toEqual([]);
    }
  });

  it('/v1/messages, built from the chunks: each split above', async () => {
    for (const [what, events] of CHAT) {
      for (const [start, rest] of SPLITS) {
        willAnswer({ events: events(start, rest) });
        const got = await raw('POST', '/v1/messages', { model: 'test/m', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] });
        expect(got.text).toContain('message_stop');
        expect(piecesIn(got.text), `${what}, split at ${start.length}`).toEqual([]);
      }
    }
  });

  for (const [what, events] of RESPONSES) {
    it(`Responses: ${what}`, async () => {
      for (const [start, rest] of SPLITS) {
        willAnswer({ events: events(start, rest) });
        const got = await raw('POST', '/v1/responses', { model: 'test/m', stream: true, input: 'hi' });
        expect(got.text).toContain('response.completed');
        expect(piecesIn(got.text), `split at ${start.length}`).toEqual([]);
      }
    });
  }
});

describe("a key's start cut short in a string no earlier scrub looked at", () => {
  const START = KEY.slice(0, 24);
  it("a chat chunk's obfuscation and a member not yet named, a choice's, a tool call's", async () => {
    willAnswer({ events: [chunk([{ ...choice({ role: 'assistant', content: 'hi', tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}', note: START } }] }), note: [START] }], {}, { obfuscation: START, extra: { deep: START } }), end] });
    const got = await raw('POST', '/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(got.text).toContain('[DONE]');
    expect(piecesIn(got.text)).toEqual([]);
  });

  it("a Responses delta's obfuscation and logprobs, another event's member not yet named", async () => {
    willAnswer({ events: [delta('hello', 1, { obfuscation: START, logprobs: [{ token: START }] }), ev({ type: 'response.output_text.done', sequence_number: 2, item_id: 'm1', output_index: 0, content_index: 0, text: 'hello', note: START }), completed(3)] });
    const got = await raw('POST', '/v1/responses', { model: 'test/m', stream: true, input: 'hi' });
    expect(got.text).toContain('response.completed');
    expect(piecesIn(got.text)).toEqual([]);
  });
});

describe('a key split between two strings of a whole answer', () => {
  it("chat: the answer's id, then its content; the generation's upstream_id", async () => {
    for (const [start, rest] of SPLITS) {
      willAnswer(chatAnswer(`chatcmpl-${start}`, `${rest} said`));
      const got = await raw('POST', '/v1/chat/completions', { model: 'test/m', messages: [{ role: 'user', content: 'hi' }] });
      expect(got.status).toBe(200);
      expect(piecesIn(got.text), `split at ${start.length}`).toEqual([]);
      const generation = await raw('GET', `/v1/generation?id=${(JSON.parse(got.text) as Body).id as string}`);
      expect(generation.text).toContain('upstream_id');
      expect(piecesIn(generation.text)).toEqual([]);
    }
  });

  it('chat: the content, then the system_fingerprint after it', async () => {
    for (const [start, rest] of SPLITS) {
      willAnswer(chatAnswer('c1', `see ${start}`, { system_fingerprint: rest }));
      const got = await raw('POST', '/v1/chat/completions', { model: 'test/m', messages: [{ role: 'user', content: 'hi' }] });
      expect(piecesIn(got.text), `split at ${start.length}`).toEqual([]);
    }
  });

  it("embeddings: the answer's id, then a member after it", async () => {
    for (const [start, rest] of SPLITS) {
      willAnswer(whole({ id: `emb-${start}`, object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], note: rest, usage: { prompt_tokens: 1, total_tokens: 1 } }));
      const got = await raw('POST', '/v1/embeddings', { model: 'test/e', input: 'hi' });
      expect(got.status).toBe(200);
      expect(piecesIn(got.text), `split at ${start.length}`).toEqual([]);
    }
  });

  it("Responses: an output item's id, then its text", async () => {
    for (const [start, rest] of SPLITS) {
      const output = [{ type: 'message', id: `msg_${start}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: `${rest} said`, annotations: [] }] }];
      willAnswer(whole({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }));
      const got = await raw('POST', '/v1/responses', { model: 'test/m', input: 'hi' });
      expect(got.status).toBe(200);
      expect(piecesIn(got.text), `split at ${start.length}`).toEqual([]);
    }
  });
});
