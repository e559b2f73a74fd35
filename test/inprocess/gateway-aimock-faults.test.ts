import type { LLMock } from '@copilotkit/aimock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aimockGateway, sseData, startAimock, streamedText, type AimockGateway } from '../support/aimock.js';

// aimock's error injection against `router serve --providers`: an upstream we did not write failing as
// aimock fails (a 5xx, a 429 with Retry-After, a 500 "drop", JSON that does not parse, a connection cut
// before any answer, a stall, a stream cut before or after its first token). Before the first token the
// gateway asks the second provider, another aimock, and the caller never sees the failure; after it the
// stream ends with the error chunk.
let first: LLMock;
let second: LLMock;
let gw: AimockGateway;

beforeAll(async () => {
  first = await startAimock((mock) => {
    mock.onMessage('503 please', { error: { message: 'aimock is overloaded', type: 'server_error' }, status: 503 });
    mock.onMessage('429 please', { error: { message: 'aimock says slow down', type: 'rate_limit_error' }, status: 429, retryAfter: 7 });
    mock.onMessage('drop please', { content: 'never seen' }, { chaos: { dropRate: 1 } });
    mock.onMessage('malformed please', { content: 'never seen' }, { chaos: { malformedRate: 1 } });
    mock.onMessage('disconnect please', { content: 'never seen' }, { chaos: { disconnectRate: 1 } });
    mock.onMessage('stall please', { content: 'never seen' }, { chaos: { latencyMs: 20_000 } });
    // aimock writes a chunk, and cuts the connection in the same turn as its last one: the chunks before it arrive.
    mock.onMessage('cut before the first token', { content: 'never seen' }, { truncateAfterChunks: 2, latency: 10 });
    mock.onMessage('cut after the first token', { content: 'one two three four' }, { chunkSize: 4, truncateAfterChunks: 3, latency: 10 });
    // Paced as if recorded: the role-only chunk, then 20 s of silence; or the first token too, then the silence.
    mock.onMessage('silent after the role', { content: 'never seen' }, { recordedTimings: { ttftMs: 0, interChunkDelaysMs: [20_000], totalDurationMs: 20_000 } });
    mock.onMessage('silent after the first token', { content: 'one two three four' }, { chunkSize: 4, recordedTimings: { ttftMs: 0, interChunkDelaysMs: [0, 20_000], totalDurationMs: 20_000 } });
  });
  second = await startAimock((mock) => mock.onMessage(/./, { content: 'the second aimock answers' }));
  const a = `${first.url}/v1`;
  const b = `${second.url}/v1`;
  const price = '{ prompt: 0.001, completion: 0.002 }';
  gw = await aimockGateway(`providers:
  - { name: first, base_url: "${a}", models: { test/chat: gpt-4o }, prices: { test/chat: ${price} } }
  - { name: first-slow, base_url: "${a}", timeout_ms: 300, models: { test/stall: gpt-4o } }
  - { name: first-quiet, base_url: "${a}", first_event_timeout_ms: 300, models: { test/quiet: gpt-4o } }
  - { name: first-idle, base_url: "${a}", idle_timeout_ms: 300, models: { test/idle: gpt-4o } }
  - { name: second, base_url: "${b}", models: { test/chat: gpt-4o, test/stall: gpt-4o, test/quiet: gpt-4o }, prices: { test/chat: ${price} } }
local_models: false
`);
});

afterAll(async () => {
  await gw?.close();
  await first?.stop();
  await second?.stop();
});

const ask = (content: string, stream: boolean, model = 'test/chat') => gw.post('/chat/completions', { model, stream, messages: [{ role: 'user', content }] });

/** The answer's text and its router_metadata, streamed or not. */
function answer(res: { text: string }, stream: boolean) {
  if (!stream) {
    const body = JSON.parse(res.text);
    return { text: body.choices[0].message.content as string, meta: body.router_metadata };
  }
  const events = sseData(res.text);
  expect(events.at(-1)).toBe('[DONE]');
  return { text: streamedText(res.text), meta: events.find((e) => e !== '[DONE]' && e.router_metadata)?.router_metadata };
}

describe('aimock failing before its first token: the gateway asks the second provider', () => {
  it.each([
    ['503 please', /first: HTTP 503.*aimock is overloaded/],
    ['429 please', /first: HTTP 429.*aimock says slow down/],
    ['drop please', /first: HTTP 500.*Chaos: request dropped/],
    ['malformed please', /^first: an answer that is not JSON$/],
    ['disconnect please', /^first: connection lost/],
  ])('%s, streamed and not', async (content, why) => {
    for (const stream of [false, true]) {
      const res = await ask(content, stream);
      expect(res.status, res.text).toBe(200);
      const { text, meta } = answer(res, stream);
      expect(text).toBe('the second aimock answers');
      expect(meta.strategy).toBe('fallback');
      expect(meta.attempts.map((a: any) => [a.provider, a.ok])).toEqual([
        ['first', false],
        ['second', true],
      ]);
      expect(meta.attempts[0].error).toMatch(why);
    }
  });

  it('a stall past timeout_ms', async () => {
    for (const stream of [false, true]) {
      const res = await ask('stall please', stream, 'test/stall');
      expect(res.status, res.text).toBe(200);
      const { text, meta } = answer(res, stream);
      expect(text).toBe('the second aimock answers');
      expect(meta.attempts.map((a: any) => [a.provider, a.ok])).toEqual([
        ['first-slow', false],
        ['second', true],
      ]);
      expect(meta.attempts[0].error).toContain('timed out');
    }
  });

  it('a stream silent after its role-only first chunk, past first_event_timeout_ms', async () => {
    const res = await ask('silent after the role', true, 'test/quiet');
    expect(res.status, res.text).toBe(200);
    const { text, meta } = answer(res, true);
    expect(text).toBe('the second aimock answers');
    expect(meta.attempts.map((a: any) => [a.provider, a.ok])).toEqual([
      ['first-quiet', false],
      ['second', true],
    ]);
    expect(meta.attempts[0].error).toContain('first_event_timeout_ms');
  });

  it('a stream cut after its role-only first chunk (content "")', async () => {
    const res = await ask('cut before the first token', true);
    expect(res.status, res.text).toBe(200);
    const { text, meta } = answer(res, true);
    expect(text).toBe('the second aimock answers');
    expect(meta.attempts.map((a: any) => [a.provider, a.ok])).toEqual([
      ['first', false],
      ['second', true],
    ]);
    expect(meta.attempts[0].error).toBe('first: stream broken (UND_ERR_SOCKET)');
    expect(first.getRequests().find((r) => JSON.stringify(r.body).includes('cut before'))?.response).toMatchObject({ status: 200, interruptReason: 'truncateAfterChunks' });
  });

  it('no provider left but a 429: the caller gets the 429 with aimock\'s Retry-After', async () => {
    const res = await gw.post('/chat/completions', { model: 'test/chat', provider: { only: ['first'] }, messages: [{ role: 'user', content: '429 please' }] });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(JSON.parse(res.text).error.message).toContain('aimock says slow down');
  });
});

describe('aimock cutting a stream after its first token', () => {
  it('ends the stream with the error chunk and [DONE]: the tokens relayed, nothing of the second provider', async () => {
    const res = await ask('cut after the first token', true);
    expect(res.status).toBe(200);
    const events = sseData(res.text);
    expect(streamedText(res.text)).toBe('one ');
    expect(events.at(-1)).toBe('[DONE]');
    const last = events.at(-2);
    expect(last.error.code).toBe(502);
    expect(last.choices[0].finish_reason).toBe('error');
  });

  it('silent after it past idle_timeout_ms: the same end, the silence named', async () => {
    const res = await ask('silent after the first token', true, 'test/idle');
    expect(res.status).toBe(200);
    const events = sseData(res.text);
    expect(streamedText(res.text)).toBe('one ');
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.at(-2).error).toMatchObject({ code: 502, message: expect.stringContaining('idle_timeout_ms') });
    expect(events.at(-2).choices[0].finish_reason).toBe('error');
  });
});
