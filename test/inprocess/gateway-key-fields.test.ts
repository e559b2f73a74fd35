import { describe, expect, it } from 'vitest';
import { delta, ev, hostileGateway, textDelta } from '../support/hostile-gateway.js';

// A provider key's start cut short (8 characters or more, past its kind) is as secret as the key in every
// string a hostile upstream sends, not only in a stream's text: a chunk's `id` (kept as the generation's
// `upstream_id`), its `system_fingerprint`, a tool call's `id`, a Responses delta's `item_id`; and the rest
// of a key whose start ended another field reaches the caller masked even while its own stream holds text.
// The gateway is `router serve --providers --record` over real HTTP, the caller the openai SDK.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
const MASK = '[provider key]';
type Body = Record<string, unknown>;
const { willAnswer, client, tapesOf } = hostileGateway(KEY);

/** Every run of 4 characters of the key past its real kind that `text` holds (none, when nothing of the secret got out). */
const secretIn = (text: string) => Array.from({ length: KEY.length - 11 }, (_, i) => KEY.slice(8 + i, 12 + i)).filter((part) => text.includes(part));
const START = KEY.slice(0, 20);

const chunkOf = (choices: Body[], more: Body = {}) => `data: ${JSON.stringify({ id: `gen-${START}`, object: 'chat.completion.chunk', created: 1, model: 'm', system_fingerprint: `fp_${START}`, ...more, choices })}\n\n`;

/** The chat stream's chunks as the SDK gives them, as JSON text, and the generation's record. */
async function chatChunks(events: string[], asked: string): Promise<{ chunks: string; generation: string }> {
  willAnswer({ events });
  const sdk = client();
  const parts: string[] = [];
  let id = '';
  for await (const part of await sdk.chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: asked }] })) {
    id = part.id;
    parts.push(JSON.stringify(part));
  }
  const res = await fetch(`${sdk.baseURL}/generation?id=${id}`, { headers: { authorization: `Bearer ${sdk.apiKey}` } });
  return { chunks: parts.join('\n'), generation: await res.text() };
}

describe('a key\'s start in a string that is no stream\'s text', () => {
  it('a chat stream\'s id, system_fingerprint: plain chunks and parsed ones, the generation\'s upstream_id, the cassette', async () => {
    const { chunks, generation } = await chatChunks([chunkOf([delta({ role: 'assistant', content: 'one' })]), chunkOf([delta({ content: ' two' })]), chunkOf([delta({ content: ' three' })]), chunkOf([delta({}, 'stop')])], 'fields plain');
    expect(chunks).toContain('one two three'.split(' ')[2]);
    expect(secretIn(chunks)).toEqual([]);
    expect(chunks).toContain(`fp_${MASK}`);
    expect(generation).toContain('upstream_id');
    expect(secretIn(generation)).toEqual([]);
    expect(secretIn(tapesOf('fields plain'))).toEqual([]);
  });

  it('a tool call\'s id and the chunk\'s fields beside it', async () => {
    const call = { tool_calls: [{ index: 0, id: `call_${START}`, type: 'function', function: { name: 'f', arguments: '{}' } }] };
    const { chunks } = await chatChunks([chunkOf([delta({ role: 'assistant', ...call })]), chunkOf([delta({}, 'tool_calls')])], 'fields tool id');
    expect(chunks).toContain(`call_${MASK}`);
    expect(secretIn(chunks)).toEqual([]);
    expect(secretIn(tapesOf('fields tool id'))).toEqual([]);
  });

  it('a Responses delta\'s item_id', async () => {
    willAnswer({ events: [ev({ type: 'response.output_text.delta', sequence_number: 1, item_id: `msg_${START}`, output_index: 0, content_index: 0, delta: 'hello' }), textDelta(' there', 2), ev({ type: 'response.completed', sequence_number: 3, response: { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [] } })] });
    const events: string[] = [];
    for await (const event of await client().responses.create({ model: 'test/m', stream: true, input: 'fields item id' })) events.push(JSON.stringify(event));
    expect(events.join('\n')).toContain(`msg_${MASK}`);
    expect(secretIn(events.join('\n'))).toEqual([]);
    expect(secretIn(tapesOf('fields item id'))).toEqual([]);
  });
});

describe('a key split between two fields while the second holds text', () => {
  it('content holds a start of its own; reasoning ends with a key\'s start; content goes on with that key', async () => {
    willAnswer({
      events: [
        chunkOf([delta({ role: 'assistant', content: `mine ${KEY.slice(0, 11)}` })], { id: 'gen-1', system_fingerprint: 'fp_1' }),
        chunkOf([delta({ reasoning: `thinking ${KEY.slice(0, 7)}` })], { id: 'gen-1', system_fingerprint: 'fp_1' }),
        chunkOf([delta({ content: `${KEY.slice(7, 30)} more` })], { id: 'gen-1', system_fingerprint: 'fp_1' }),
        chunkOf([delta({}, 'stop')], { id: 'gen-1', system_fingerprint: 'fp_1' }),
      ],
    });
    const texts: Record<string, string> = {};
    for await (const part of await client().chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'fields cross held' }] })) {
      const d = part.choices[0]?.delta as Body | undefined;
      for (const name of ['reasoning', 'content']) if (typeof d?.[name] === 'string') texts[name] = (texts[name] ?? '') + (d[name] as string);
    }
    const said = JSON.stringify(texts);
    expect(secretIn(said)).toEqual([]);
    expect(texts.content).toContain(' more');
    expect(secretIn(tapesOf('fields cross held'))).toEqual([]);
  });
});
