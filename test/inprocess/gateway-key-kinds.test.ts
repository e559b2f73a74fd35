import { describe, expect, it } from 'vitest';
import { chunk, delta, ev, hostileGateway, textDelta } from '../support/hostile-gateway.js';

// A provider key's kind is the start its provider gives every key (`sk-proj-`): the random part after it
// can begin with a word (`ab3_`) that is as secret as the rest. A hostile upstream that ends a stream on
// the key's start, or quotes a start in the middle of its words, must get none of it past the real kind
// to the caller or a cassette. The gateway is `router serve --providers --record` over real HTTP, the
// caller the openai SDK, chat and Responses.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
const MASK = '[provider key]';
const { willAnswer, client, tapesOf } = hostileGateway(KEY);

/** Every run of 4 characters of the key past its real kind that `text` holds (none, when nothing of the secret got out). */
const secretIn = (text: string) => Array.from({ length: KEY.length - 11 }, (_, i) => KEY.slice(8 + i, 12 + i)).filter((part) => text.includes(part));

async function chatContent(events: string[], asked: string): Promise<string> {
  willAnswer({ events });
  let said = '';
  for await (const part of await client().chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: asked }] })) said += part.choices[0]?.delta?.content ?? '';
  return said;
}

async function responsesText(events: string[], asked: string): Promise<{ deltas: string; done: string[] }> {
  willAnswer({ events });
  let deltas = '';
  const done: string[] = [];
  for await (const event of await client().responses.create({ model: 'test/m', stream: true, input: asked })) {
    if (event.type === 'response.output_text.delta') deltas += event.delta;
    else done.push(JSON.stringify(event));
  }
  return { deltas, done };
}

describe('a key\'s kind is its provider\'s, not a word of its secret', () => {
  it('a chat stream that ends on the key\'s start past `sk-proj-`: the caller and the cassette get the kind, then the mask', async () => {
    const said = await chatContent([chunk([delta({ role: 'assistant', content: 'mine is ' })]), chunk([delta({ content: KEY.slice(0, 12) })]), chunk([delta({}, 'stop')])], 'chat ends on sk-proj-ab3_');
    expect(said).toBe(`mine is sk-proj-${MASK}`);
    expect(secretIn(tapesOf('chat ends on sk-proj-ab3_'))).toEqual([]);
  });

  it('a Responses stream that ends on it', async () => {
    const { deltas } = await responsesText([textDelta('mine is ', 1), textDelta(KEY.slice(0, 12), 2), ev({ type: 'response.content_part.done', sequence_number: 3, item_id: 'm1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } })], 'responses end on sk-proj-ab3_');
    expect(deltas).toBe(`mine is sk-proj-${MASK}`);
  });
});
