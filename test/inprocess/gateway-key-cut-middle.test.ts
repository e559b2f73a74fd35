import { describe, expect, it } from 'vitest';
import { chunk, delta, ev, hostileGateway, textDelta } from '../support/hostile-gateway.js';

// A provider key's start cut short (8 characters or more, past its kind) is as secret as the key wherever
// it stands, not only at a text's end: a hostile upstream that quotes one in the middle of its words
// ("sk-proj-ab3_Xy9 and then more") must get none of it past the kind to the caller or a cassette, in a
// whole answer, a stream's text (in one piece, or after its kind went out), a Responses stream's deltas
// and its `.done` events and final output alike. The gateway is `router serve --providers --record` over
// real HTTP, the caller the openai SDK, chat and Responses.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
const MASK = '[provider key]';
type Body = Record<string, unknown>;
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

const START = KEY.slice(0, 20);
const SAID = `an upstream quotes ${START} and then more words`;

describe('a key\'s start cut short in the middle of a text', () => {
  it('a whole chat answer: masked in the caller\'s answer and the cassette', async () => {
    willAnswer({ body: JSON.stringify({ id: 'gen-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: SAID }, finish_reason: 'stop' }] }) });
    const answer = await client().chat.completions.create({ model: 'test/m', messages: [{ role: 'user', content: 'whole chat middle' }] });
    expect(answer.choices[0]!.message.content).toBe(`an upstream quotes ${MASK} and then more words`);
    expect(secretIn(tapesOf('whole chat middle'))).toEqual([]);
  });

  it('a whole Responses answer', async () => {
    willAnswer({ body: JSON.stringify({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [{ type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: SAID, annotations: [] }] }] }) });
    const answer = await client().responses.create({ model: 'test/m', input: 'whole responses middle' });
    expect(answer.output_text).toBe(`an upstream quotes ${MASK} and then more words`);
  });

  it('a chat stream: in one delta, and after its kind went out in the one before', async () => {
    const said = await chatContent([chunk([delta({ role: 'assistant', content: SAID })]), chunk([delta({ content: ' then sk-pr' })]), chunk([delta({ content: `${START.slice(5)} and more` })]), chunk([delta({}, 'stop')])], 'chat stream middle');
    expect(said).toBe(`an upstream quotes ${MASK} and then more words then sk-pr${MASK} and more`);
    expect(secretIn(tapesOf('chat stream middle'))).toEqual([]);
  });

  it('a Responses stream: its deltas, its `.done` events and final output hide the same starts and keys', async () => {
    const part = { item_id: 'm1', output_index: 0, content_index: 0 };
    const whole = `${SAID}; whole: ${KEY}.`;
    const message = { type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: whole, annotations: [] }] };
    const { deltas, done } = await responsesText([
      textDelta(SAID, 1), textDelta('; whole: sk-proj-', 2), textDelta(`${KEY.slice(8)}.`, 3),
      ev({ type: 'response.output_text.done', sequence_number: 4, ...part, text: whole }),
      ev({ type: 'response.content_part.done', sequence_number: 5, ...part, part: { type: 'output_text', text: whole, annotations: [] } }),
      ev({ type: 'response.output_item.done', sequence_number: 6, output_index: 0, item: message }),
      ev({ type: 'response.completed', sequence_number: 7, response: { id: 'resp_2', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [message] } }),
    ], 'responses stream middle');
    expect(deltas).toBe(`an upstream quotes ${MASK} and then more words; whole: sk-proj-${MASK}.`);
    expect(secretIn(`${deltas}${done.join('\n')}`)).toEqual([]);
    expect(secretIn(tapesOf('responses stream middle'))).toEqual([]);
    const texts = done.map((e) => JSON.parse(e) as Body).filter((e) => e.type === 'response.output_text.done').map((e) => e.text as string);
    expect(texts).toEqual([`an upstream quotes ${MASK} and then more words; whole: ${MASK}.`]);
  });

  it('a function call\'s arguments quoting a start: deltas and `.done` alike', async () => {
    const args = JSON.stringify({ note: SAID });
    const { done } = await responsesText([
      ev({ type: 'response.function_call_arguments.delta', sequence_number: 1, item_id: 'fc1', output_index: 0, delta: args.slice(0, 30) }),
      ev({ type: 'response.function_call_arguments.delta', sequence_number: 2, item_id: 'fc1', output_index: 0, delta: args.slice(30) }),
      ev({ type: 'response.function_call_arguments.done', sequence_number: 3, item_id: 'fc1', output_index: 0, arguments: args }),
      ev({ type: 'response.completed', sequence_number: 4, response: { id: 'resp_3', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [{ type: 'function_call', id: 'fc1', call_id: 'call_1', name: 'note', arguments: args, status: 'completed' }] } }),
    ], 'responses arguments middle');
    const joined = done.join('\n');
    expect(joined).not.toContain('response.failed');
    const masked = done.filter((e) => e.includes(MASK)).map((e) => (JSON.parse(e) as Body).type);
    expect(masked).toEqual(['response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.completed']);
    expect(secretIn(joined)).toEqual([]);
  });
});

describe('a key split between two fields of one stream', () => {
  /** The chat stream's texts as the SDK's caller joins them: reasoning, content, each tool call's arguments. */
  async function fields(events: string[], asked: string): Promise<string> {
    willAnswer({ events });
    const texts: Record<string, string> = {};
    const add = (name: string, text: unknown) => typeof text === 'string' && (texts[name] = (texts[name] ?? '') + text);
    for await (const part of await client().chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: asked }] })) {
      const d = part.choices[0]?.delta as (Body & { tool_calls?: { index: number; function?: { arguments?: string } }[] }) | undefined;
      add('reasoning', d?.reasoning);
      add('content', d?.content);
      for (const call of d?.tool_calls ?? []) add(`tool${call.index}`, call.function?.arguments);
    }
    return JSON.stringify(texts);
  }

  it('its start in reasoning, its rest in content: the rest is masked', async () => {
    const said = await fields([chunk([delta({ role: 'assistant', reasoning: `thinking ${START}` })]), chunk([delta({ content: `${KEY.slice(20, 40)}` })]), chunk([delta({ content: `${KEY.slice(40)} done` })]), chunk([delta({}, 'stop')])], 'reasoning then content');
    expect(JSON.parse(said)).toEqual({ reasoning: `thinking sk-proj-${MASK}`, content: `${MASK}${MASK} done` });
    expect(secretIn(said)).toEqual([]);
    expect(secretIn(tapesOf('reasoning then content'))).toEqual([]);
  });

  it('its start in one tool call\'s arguments, its rest in the next\'s', async () => {
    const call = (index: number, args: string) => ({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: 'f', arguments: args } }] });
    const said = await fields([chunk([delta({ role: 'assistant', ...call(0, `{"a":"${KEY.slice(0, 12)}`) })]), chunk([delta(call(1, `${KEY.slice(12)}"}`))]), chunk([delta({}, 'tool_calls')])], 'two tool calls');
    expect(secretIn(said)).toEqual([]);
    expect(JSON.parse(said)).toEqual({ tool0: `{"a":"sk-proj-${MASK}`, tool1: `${MASK}"}` });
  });
});
