import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { emulatorFolder } from '../support/emulator-folder.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A Responses stream cut after some of its answer ends with `response.failed`: its response carries what was
// sent (the items so far, the one cut short `incomplete`, and their `output_text`), as the gateway relays an
// upstream's and as the fake models' own streams end. Before, both said `output: []` and `output_text: ""`
// though the caller had been sent text. Chat's error chunk and /v1/messages' `error` event restate nothing (their
// deltas are the answer): the text each shape sent is the same.
const folder = emulatorFolder('router-responses-failed-output-');
let upstream: LocalUpstream;
let gateway: Emulator;

const sse = (res: ServerResponse, data: Record<string, unknown>, named = true) => res.write(`${named ? `event: ${String(data.type)}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
const reasoning = { type: 'reasoning', id: 'rs_x', summary: [{ type: 'summary_text', text: 'thought' }], status: 'completed' };

beforeAll(async () => {
  upstream = await localUpstream((req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const cut = () => setTimeout(() => res.destroy(), 20);
    if (!req.url?.endsWith('/responses')) {
      for (const content of ['one ', 'two ']) sse(res, { id: 'up-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] }, false);
      return cut();
    }
    let n = 0;
    const event = (data: Record<string, unknown>) => sse(res, { ...data, sequence_number: n++ });
    event({ type: 'response.created', response: { id: 'resp_x', object: 'response', model: 'm', status: 'in_progress', output: [] } });
    // `deltas-only`: text with no item opened first, as some servers send it.
    if (JSON.stringify(body.input).includes('deltas-only')) {
      for (const delta of ['one ', 'two ']) event({ type: 'response.output_text.delta', item_id: 'msg_x', output_index: 0, content_index: 0, delta });
      return cut();
    }
    event({ type: 'response.output_item.added', output_index: 0, item: { ...reasoning, summary: [], status: 'in_progress' } });
    event({ type: 'response.output_item.done', output_index: 0, item: reasoning });
    event({ type: 'response.output_item.added', output_index: 1, item: { type: 'message', id: 'msg_x', role: 'assistant', status: 'in_progress', content: [] } });
    event({ type: 'response.content_part.added', item_id: 'msg_x', output_index: 1, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const delta of ['one ', 'two ']) event({ type: 'response.output_text.delta', item_id: 'msg_x', output_index: 1, content_index: 0, delta });
    cut();
  });
  const providers = `providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/m: m } }\n  - { name: resp, responses: true, base_url: "${upstream.baseUrl}", models: { test/r: m } }\n`;
  gateway = await folder.start('gateway', { gateway: { config: parseProviders(providers, {}) } });
});

afterAll(() => upstream?.close());

/** Each data frame of a stream, parsed. */
async function frames(path: string, body: unknown, headers: Record<string, string> = {}): Promise<any[]> {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const text = await res.text();
  return text
    .split('\n\n')
    .map((f) => f.split('\n').find((l) => l.startsWith('data: '))?.slice(6))
    .filter((d): d is string => !!d && d !== '[DONE]')
    .map((d) => JSON.parse(d));
}

const deltas = (got: any[]) => got.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta as string).join('');

describe('response.failed after part of an answer', () => {
  it('through the gateway: the items relayed, the cut one incomplete, and their text; chat and /v1/messages sent the same text', async () => {
    const got = await frames('/v1/responses', { model: 'test/r', stream: true, input: 'hi' });
    const failed = got.at(-1);
    expect(failed.type).toBe('response.failed');
    expect(failed.response.status).toBe('failed');
    expect(failed.response.output).toEqual([reasoning, { type: 'message', id: 'msg_x', role: 'assistant', status: 'incomplete', content: [{ type: 'output_text', text: 'one two ', annotations: [] }] }]);
    expect(failed.response.output_text).toBe('one two ');
    expect(deltas(got)).toBe('one two ');

    const chat = await frames('/v1/chat/completions', { model: 'test/m', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.map((c) => c.choices?.[0]?.delta?.content ?? '').join('')).toBe('one two ');
    expect(chat.at(-1).choices[0].finish_reason).toBe('error');
    const messages = await frames('/v1/messages', { model: 'test/m', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(messages.filter((e) => e.delta?.type === 'text_delta').map((e) => e.delta.text).join('')).toBe('one two ');
    expect(messages.at(-1).type).toBe('error');
  });

  it('through the gateway: text whose item the upstream never opened is a message of its own', async () => {
    const failed = (await frames('/v1/responses', { model: 'test/r', stream: true, input: 'deltas-only' })).at(-1);
    expect(failed.type).toBe('response.failed');
    expect(failed.response.output).toEqual([{ type: 'message', id: 'msg_x', role: 'assistant', status: 'incomplete', content: [{ type: 'output_text', text: 'one two ', annotations: [] }] }]);
    expect(failed.response.output_text).toBe('one two ');
  });

  it.each([6, 9])('a fake model cut by error-chunk,after=%i: what it sent, numbered after it', async (after) => {
    const got = await frames('/v1/responses', { model: 'local/echo', stream: true, input: 'tell me about the tides of the northern sea' }, { 'x-router-fault': `error-chunk,after=${after}` });
    const failed = got.at(-1);
    expect(got).toHaveLength(after + 1);
    expect(failed.type).toBe('response.failed');
    expect(failed.sequence_number).toBe(after);
    const text = deltas(got);
    expect(text.length).toBeGreaterThan(0);
    const message = got.find((e) => e.type === 'response.output_item.added').item;
    expect(failed.response.output).toEqual([{ ...message, status: 'incomplete', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] }]);
    expect(failed.response.output_text).toBe(text);
  });

  it('a fake model cut just before its final event: the message whole, completed', async () => {
    const whole = await frames('/v1/responses', { model: 'local/echo', stream: true, input: 'hello there' });
    const after = whole.length - 1;
    const got = await frames('/v1/responses', { model: 'local/echo', stream: true, input: 'hello there' }, { 'x-router-fault': `error-chunk,after=${after}` });
    const failed = got.at(-1);
    expect([failed.type, failed.sequence_number]).toEqual(['response.failed', after]);
    expect(failed.response.output).toEqual([got.find((e) => e.type === 'response.output_item.done').item]);
    expect(failed.response.output[0].status).toBe('completed');
    expect(failed.response.output_text).toBe(whole.at(-1).response.output_text);
  });

  it('a fake model cut inside its function call: the call so far, incomplete', async () => {
    const body = { model: 'local/tools', stream: true, input: 'please echo this', tools: [{ type: 'function', name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } }] };
    // response.created, .in_progress, the call added, its arguments' one delta: cut before they are done.
    const got = await frames('/v1/responses', body, { 'x-router-fault': 'error-chunk,after=4' });
    const [added, delta, failed] = got.slice(2);
    expect([added.type, delta.type, failed.type]).toEqual(['response.output_item.added', 'response.function_call_arguments.delta', 'response.failed']);
    expect(failed.response.output).toEqual([{ ...added.item, arguments: delta.delta, status: 'incomplete' }]);
    expect(failed.response.output_text).toBe('');
  });
});
