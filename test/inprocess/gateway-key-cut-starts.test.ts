import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { chunk, delta, ev, hostileGateway, textDelta } from '../support/hostile-gateway.js';

// A provider key's start cut short (more than its kind) is as secret as the key: a hostile upstream that
// echoes one in a refusal, ends a stream on one, or splits a key where the relay did not look (a tool's
// name, reasoning_details, a plain-looking chunk with more than content) must not get any of it past the
// kind to the caller or a cassette. The gateway is `router serve --providers --record` over real HTTP,
// the caller the openai SDK.
const KEY = 'sk-or-v1-0123456789abcdef0123456789abcdef';
const MASK = '[provider key]';
type Body = Record<string, unknown>;
const { willAnswer, client, tapesOf, lastSeen, restart } = hostileGateway(KEY);

/** Each 8 characters of the key past its kind that `text` holds (none, when nothing of the secret got out). */
const secretIn = (text: string) => Array.from({ length: KEY.length - 16 }, (_, i) => KEY.slice(9 + i, 17 + i)).filter((part) => text.includes(part));

/** A chat stream's deltas as the SDK's caller joins them: content, reasoning_details' text, the first tool call's name and arguments. */
async function chatTexts(events: string[], asked: string): Promise<Record<string, string>> {
  willAnswer({ events });
  const texts: Record<string, string> = {};
  const add = (name: string, text: unknown) => typeof text === 'string' && (texts[name] = (texts[name] ?? '') + text);
  for await (const part of await client().chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: asked }] })) {
    const d = part.choices[0]?.delta as (Body & { tool_calls?: { function?: { name?: string; arguments?: string } }[]; reasoning_details?: { text?: string }[] }) | undefined;
    add('content', d?.content);
    add('name', d?.tool_calls?.[0]?.function?.name);
    add('arguments', d?.tool_calls?.[0]?.function?.arguments);
    for (const item of d?.reasoning_details ?? []) add('details', item.text);
  }
  return texts;
}

describe('a provider key cut short', () => {
  it('a refusal that echoes the key cut short: neither the caller\'s error nor the cassette holds any of it past the kind', async () => {
    willAnswer({ status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY.slice(0, 24)}. You can find your API key at https://example.com.` } }) });
    const failure = (await client().chat.completions.create({ model: 'test/m', messages: [{ role: 'user', content: 'refuse me' }] }).catch((e: unknown) => e)) as APIError;
    expect(failure).toBeInstanceOf(APIError);
    expect(lastSeen()!.authorization).toBe(`Bearer ${KEY}`);
    const said = `${failure.message} ${JSON.stringify(failure.error)}`;
    expect(said).toContain(`Incorrect API key provided: ${MASK}. You can find`);
    expect(secretIn(said)).toEqual([]);
    await restart();
    const tape = tapesOf('refuse me');
    expect(tape).toContain(`Incorrect API key provided: ${MASK}.`);
    expect(secretIn(tape)).toEqual([]);
  });

  it('a chat stream that ends on a key\'s start: the caller gets its kind, then the mask', async () => {
    const texts = await chatTexts([chunk([delta({ role: 'assistant', content: 'a ' })]), chunk([delta({ content: `b ${KEY.slice(0, 30)}` })]), chunk([delta({}, 'stop')])], 'end on a start');
    expect(texts.content).toBe(`a b sk-or-v1-${MASK}`);
  });

  it('the finishing chunk\'s own text is kept before what was held for it', async () => {
    const texts = await chatTexts([chunk([delta({ role: 'assistant', content: 'a ' })]), chunk([delta({ content: `b ${KEY.slice(0, 20)}` }, 'stop')])], 'finish on a start');
    expect(texts.content).toBe(`a b sk-or-v1-${MASK}`);
  });

  it('a Responses stream whose part ends on a key\'s start', async () => {
    willAnswer({ events: [textDelta('a ', 1), textDelta(KEY.slice(0, 30), 2), ev({ type: 'response.content_part.done', sequence_number: 3, item_id: 'm1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } })] });
    let said = '';
    for await (const event of await client().responses.create({ model: 'test/m', stream: true, input: 'responses end on a start' })) if (event.type === 'response.output_text.delta') said += event.delta;
    expect(said).toBe(`a sk-or-v1-${MASK}`);
  });

  it.each([
    ['a tool\'s name', 'name', (part: string) => ({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: part, arguments: '' } }] })],
    ['reasoning_details\' text', 'details', (part: string) => ({ reasoning_details: [{ type: 'reasoning.text', index: 0, text: part }] })],
    ['reasoning_details beside plain content', 'details', (part: string) => ({ content: '.', reasoning_details: [{ type: 'reasoning.text', text: part }] })],
  ] as const)('a key split in %s is never joined', async (_, field, d) => {
    const plain = [1, 2, 3].map(() => chunk([delta({ content: '.' })]));
    const texts = await chatTexts([chunk([delta({ role: 'assistant', content: '' })]), ...plain, chunk([delta(d(KEY.slice(0, 20)))]), chunk([delta(d(KEY.slice(20)))]), chunk([delta({}, 'stop')])], `split in ${field}`);
    expect(texts[field]).toBe(MASK);
    expect(secretIn(JSON.stringify(texts))).toEqual([]);
  });
});
