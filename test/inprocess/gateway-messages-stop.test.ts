import type { ServerResponse } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../src/emulator/models/models.js';
import { runBatch } from '../support/emulator-folder.js';
import { failing, localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';

// `POST /v1/messages` through a gateway: which stop sequence ended an answer, where the upstream says it (vLLM's
// `stop_reason` in the choice, SGLang's `matched_stop`), where a fake model behind the gateway made it, and in a
// `/v1/messages` batch run upstream; message_start counts the input before the upstream's usage comes.
// Before: `end_turn` and `stop_sequence: null` in every answer, `input_tokens: 0` at message_start.
type Body = Record<string, any>;
type Event = Anthropic.MessageStreamEvent;

/** The upstream's prompt count, unlike the gateway's own: the final usage is the upstream's. */
const UPSTREAM_PROMPT_TOKENS = 7;

/**
 * An OpenAI-compatible server as vLLM (model `m`) and SGLang (`sg`) are: it echoes the last message cut before the
 * first stop sequence in it and names that one in the choice; `whole` answers a stream request with a whole answer;
 * `liar` names "STOP" whatever it was asked.
 */
function answerEcho(res: ServerResponse, body: Body): void {
  const text = String(body.messages.at(-1).content);
  const hit = ((body.stop ?? []) as string[]).filter((s) => text.includes(s)).sort((a, b) => text.indexOf(a) - text.indexOf(b))[0];
  const content = hit === undefined ? text : text.slice(0, text.indexOf(hit));
  const end = { finish_reason: 'stop', ...(body.model === 'sg' ? { matched_stop: hit ?? null } : { stop_reason: body.model === 'liar' ? 'STOP' : hit ?? null }) };
  const usage = { prompt_tokens: UPSTREAM_PROMPT_TOKENS, completion_tokens: 2, total_tokens: UPSTREAM_PROMPT_TOKENS + 2 };
  const base = { id: 'cmpl-1', created: 1, model: body.model };
  if (!body.stream || body.model === 'whole') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, ...end }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (choices: Body[], more: Body = {}) => res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...more })}\n\n`);
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, stop_reason: null }]);
  chunk([{ index: 0, delta: { content }, finish_reason: null, stop_reason: null }]);
  chunk([{ index: 0, delta: {}, ...end }]);
  chunk([], { usage });
  res.end('data: [DONE]\n\n');
}

let upstream: LocalUpstream;
let down: LocalUpstream;
let gw: Awaited<ReturnType<typeof testGateway>>;
let client: Anthropic;

beforeAll(async () => {
  upstream = await localUpstream((_req, res, body) => answerEcho(res, body));
  down = await failing(503);
  gw = await testGateway(`providers:
  - { name: down, base_url: "${down.baseUrl}", models: { test/down: m } }
  - { name: vllm, base_url: "${upstream.baseUrl}", models: { test/vllm: m, test/sglang: sg, test/whole: whole, test/liar: liar } }
`, 'messages-stop');
  client = new Anthropic({ apiKey: gw.gateway.store.firstKeys().apiKey, baseURL: gw.gateway.apiRoot, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await down?.close();
});

const ask = (model: string, content: string, more: Body = {}) => ({ model, max_tokens: 50, stop_sequences: ['NEVER', 'STOP'], messages: [{ role: 'user' as const, content }], ...more });

/** A streamed answer's final message and its events, each as it came (the SDK's message grows from message_start's). */
async function streamed(body: Anthropic.MessageCreateParamsNonStreaming): Promise<{ m: Anthropic.Message; events: Event[] }> {
  const stream = client.messages.stream(body);
  const events: Event[] = [];
  stream.on('streamEvent', (e) => events.push(structuredClone(e)));
  return { m: await stream.finalMessage(), events };
}

describe('POST /v1/messages through a gateway: the stop sequence that ended an answer', () => {
  it('said by the upstream (vLLM, SGLang, a whole answer to a stream request): whole and streamed', async () => {
    for (const model of ['test/vllm', 'test/sglang', 'test/whole']) {
      const whole = await client.messages.create(ask(model, 'one two STOP three'));
      expect([whole.content, whole.stop_reason, whole.stop_sequence], model).toEqual([[{ type: 'text', text: 'one two ', citations: null }], 'stop_sequence', 'STOP']);
      const { m, events } = await streamed(ask(model, 'one two STOP three'));
      expect([m.content, m.stop_reason, m.stop_sequence], model).toEqual([whole.content, 'stop_sequence', 'STOP']);
      expect(events.find((e): e is Anthropic.MessageDeltaEvent => e.type === 'message_delta')!.delta, model).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'STOP' });
      // A sequence the upstream did not meet (its `stop_reason: null`): the turn ended.
      const natural = await client.messages.create(ask(model, 'one two'));
      expect([natural.stop_reason, natural.stop_sequence], model).toEqual(['end_turn', null]);
    }
  });

  it('an upstream naming a sequence the request did not ask for is not believed', async () => {
    const m = await client.messages.create(ask('test/liar', 'one two STOP three', { stop_sequences: ['NEVER'] }));
    expect([m.stop_reason, m.stop_sequence]).toEqual(['end_turn', null]);
    const { m: streamedOne } = await streamed(ask('test/liar', 'one two', { stop_sequences: ['NEVER'] }));
    expect([streamedOne.stop_reason, streamedOne.stop_sequence]).toEqual(['end_turn', null]);
  });

  it('made by a fake model the gateway falls back to, whole and streamed', async () => {
    const body = ask('test/down', 'one two STOP three', { models: ['test/down', 'local/echo'] }) as Anthropic.MessageCreateParamsNonStreaming;
    const whole = await client.messages.create(body);
    expect([whole.model, whole.content, whole.stop_reason, whole.stop_sequence]).toEqual(['local/echo', [{ type: 'text', text: 'one two ', citations: null }], 'stop_sequence', 'STOP']);
    const { m } = await streamed(body);
    expect([m.content, m.stop_reason, m.stop_sequence]).toEqual([whole.content, 'stop_sequence', 'STOP']);
  });

  it('message_start counts the input as the gateway does (its hang-up charge\'s count); the final usage is the upstream\'s', async () => {
    const { m, events } = await streamed(ask('test/vllm', 'one two STOP three'));
    const start = events.find((e): e is Anthropic.MessageStartEvent => e.type === 'message_start')!;
    expect(start.message.usage.input_tokens).toBe(countTokens('user: one two STOP three'));
    expect(m.usage.input_tokens).toBe(UPSTREAM_PROMPT_TOKENS);
  });

  it('a /v1/messages batch run upstream: each result says which sequence ended it', async () => {
    const lines = [ask('test/vllm', 'one STOP two'), ask('test/vllm', 'three END four', { stop_sequences: ['END'] }), ask('test/vllm', 'five six')].map(({ model: _m, ...body }) => body);
    const seen = await runBatch(gw.gateway, 'spec', '/v1/messages', 'test/vllm', lines);
    const bodies = [...seen.results].sort((a: Body, b: Body) => a.custom_id.localeCompare(b.custom_id)).map((r: Body) => r.response.body);
    expect(bodies.map((b) => [b.content[0].text, b.stop_reason, b.stop_sequence])).toEqual([['one ', 'stop_sequence', 'STOP'], ['three ', 'stop_sequence', 'END'], ['five six', 'end_turn', null]]);
  });
});
