import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { breaking, localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// The official `openai` package pointed at a gateway (`router serve --providers`) whose upstream is
// another emulator, spoken to only over HTTP: what programs that are not ours see through it.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let locals: LocalUpstream[];
let busyAsked = 0;
let client: OpenAI;
let speaker: OpenAI;
let direct: OpenAI;

const chunk = (o: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'gen-nd', object: 'chat.completion.chunk', created: 1, model: 'm', ...o })}\n\n`;
const delta = (content: string) => chunk({ choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }] });
const finish = chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
const usageChunk = chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-sdk-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  // Servers that end a stream without `data: [DONE]` (TGI before 2.2, llama-box, ik_llama.cpp): the
  // close after the last chunk is the end. Usage last (its blank line missing, in one), or finish_reason last.
  const noDone = await localUpstream((_req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const ask = JSON.stringify(body.messages);
    const last = ask.includes('unterminated') ? usageChunk.slice(0, -1) : ask.includes('usage') ? usageChunk : '';
    res.end(delta('whole ') + delta('answer') + finish + last);
  });
  // A 429 with Retry-After (or, for `down`, a 503) for its first request, then answers.
  const busy = await localUpstream((_req, res, body) => {
    if (++busyAsked === 1) {
      const down = body.model === 'down';
      res.writeHead(down ? 503 : 429, { 'content-type': 'application/json', ...(down ? {} : { 'retry-after': '1' }) });
      res.end(JSON.stringify({ error: { message: down ? 'down for a moment' : 'slow down, busy' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'b-1', object: 'chat.completion', created: 7, model: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'after the wait' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 } }));
  });
  const late = await breaking(3);
  locals = [noDone, busy, late];
  const keys = upstream.store.firstKeys();
  const yaml = `
providers:
  - name: up
    base_url: ${upstream.apiRoot}/v1
    api_key_env: UP_KEY
    responses: true
    models: { test/echo: local/echo, test/lorem: local/lorem, test/tools: local/tools }
    embedding_models: { test/embed: local/embed }
    prices: { test/echo: { prompt: 0.001, completion: 0.002 }, test/lorem: { prompt: 0.0001, completion: 0.0002 } }
  - { name: voice, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_MGMT, speech_models: { test/tts: local/tts } }
  - { name: no-done, base_url: "${noDone.baseUrl}", models: { test/no-done: m }, prices: { test/no-done: { prompt: 0.01, completion: 0.02 } } }
  - { name: busy, base_url: "${busy.baseUrl}", models: { test/busy: m, test/down: down } }
  - { name: late, base_url: "${late.baseUrl}", models: { test/late: m } }
`;
  const config = parseProviders(yaml, { UP_KEY: keys.apiKey, UP_MGMT: keys.managementKey });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
  const own = gateway.store.firstKeys();
  const baseURL = `${gateway.apiRoot}/v1`;
  client = new OpenAI({ apiKey: own.apiKey, baseURL, maxRetries: 0 });
  speaker = new OpenAI({ apiKey: own.managementKey, baseURL, maxRetries: 0 });
  direct = new OpenAI({ apiKey: keys.apiKey, baseURL: `${upstream.apiRoot}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  for (const l of locals ?? []) await l.close();
  rmSync(dir, { recursive: true, force: true });
});

const user = (content: string) => [{ role: 'user' as const, content }];
const weather = [{ type: 'function' as const, function: { name: 'get_weather', description: 'the weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];

describe('the openai package through a gateway', () => {
  it('chat, whole and streamed (with usage, and through the stream helper), answers as the upstream does', async () => {
    const whole = await client.chat.completions.create({ model: 'test/echo', messages: user('hello there') });
    expect(whole.choices[0]!.message.content).toBe('hello there');
    expect(whole.model).toBe('test/echo');
    const stream = await client.chat.completions.create({ model: 'test/lorem', messages: user('write 9 words'), stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      usage ??= c.usage;
    }
    const straight = await direct.chat.completions.create({ model: 'local/lorem', messages: user('write 9 words') });
    expect(text).toBe(straight.choices[0]!.message.content);
    expect(usage).toMatchObject({ completion_tokens: straight.usage!.completion_tokens, prompt_tokens: straight.usage!.prompt_tokens });
    const final = await client.chat.completions.stream({ model: 'test/echo', messages: user('a b c') }).finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('a b c');
  });

  it('a stream ends with its usage chunk, priced, whether include_usage is asked, left out or false', async () => {
    for (const stream_options of [{ include_usage: true }, undefined, { include_usage: false }]) {
      const stream = await client.chat.completions.create({ model: 'test/echo', messages: user('one two'), stream: true, ...(stream_options && { stream_options }) });
      const usages: (OpenAI.CompletionUsage & { cost?: number })[] = [];
      for await (const c of stream) if (c.usage) usages.push(c.usage);
      expect(usages).toHaveLength(1);
      expect(usages[0]!.cost).toBeCloseTo(usages[0]!.prompt_tokens * 0.001 + usages[0]!.completion_tokens * 0.002, 12);
    }
  });

  it('tools: the call parsed from a whole answer and from a stream alike', async () => {
    const whole = await client.chat.completions.create({ model: 'test/tools', messages: user('Paris'), tools: weather });
    expect(whole.choices[0]!.finish_reason).toBe('tool_calls');
    const call = whole.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    const streamed = await client.chat.completions.stream({ model: 'test/tools', messages: user('Paris'), tools: weather }).finalChatCompletion();
    const again = streamed.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect([streamed.choices[0]!.finish_reason, again.function.name, JSON.parse(again.function.arguments)]).toEqual(['tool_calls', 'get_weather', { city: 'Paris' }]);
  });

  it('response_format json_schema: the content is JSON with the schema required members', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false };
    const c = await client.chat.completions.create({ model: 'test/echo', messages: user('a person'), response_format: { type: 'json_schema', json_schema: { name: 'person', strict: true, schema } } });
    const person = JSON.parse(c.choices[0]!.message.content!) as Record<string, unknown>;
    expect(Object.keys(person).sort()).toEqual(['age', 'name']);
    expect([typeof person.name, Number.isInteger(person.age)]).toEqual(['string', true]);
  });

  it('embeddings: the package default (base64, decoded by it) equals floats', async () => {
    const viaBase64 = await client.embeddings.create({ model: 'test/embed', input: ['one', 'two'], dimensions: 5 });
    const viaFloat = await client.embeddings.create({ model: 'test/embed', input: ['one', 'two'], dimensions: 5, encoding_format: 'float' });
    expect(viaBase64.data).toHaveLength(2);
    viaBase64.data.forEach((d, i) => d.embedding.forEach((x, j) => expect(x).toBeCloseTo(viaFloat.data[i]!.embedding[j]!, 6)));
  });

  it('Responses, whole and streamed through the stream helper', async () => {
    const r = await client.responses.create({ model: 'test/echo', input: 'hi you' });
    expect([r.status, r.output_text, r.model]).toEqual(['completed', 'hi you', 'test/echo']);
    const stream = client.responses.stream({ model: 'test/echo', input: 'x y z' });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await stream.finalResponse();
    expect([final.output_text, deltas]).toEqual(['x y z', 'x y z']);
  });

  it('speech: MP3 frames relayed', async () => {
    const res = await speaker.audio.speech.create({ model: 'test/tts', voice: 'alloy', input: 'hello there', response_format: 'mp3' });
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect([bytes[0], bytes[1]! & 0xe0]).toEqual([0xff, 0xe0]);
  });

  it('an abort mid-stream: charged what the generation says, less than the bound, and the generation is cancelled', async () => {
    const ws = gateway.store.createWorkspace('abort', 1);
    const caller = new OpenAI({ apiKey: ws.apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0 });
    const stream = await caller.chat.completions.create({ model: 'test/lorem', messages: user('write 2000 words'), stream: true, max_tokens: 4000 });
    let id = '';
    let content = 0;
    for await (const c of stream) {
      id = c.id;
      if (c.choices[0]?.delta.content && ++content === 3) break;
    }
    const g = await vi.waitFor(async () => {
      const r = await fetch(`${gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${ws.apiKey}` } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { data: { cancelled: boolean; total_cost: number; tokens_completion: number } }).data;
    }, SETTLE);
    expect(g.cancelled).toBe(true);
    expect(g.tokens_completion).toBeGreaterThanOrEqual(3);
    expect(g.total_cost).toBeGreaterThan(0);
    expect(g.total_cost).toBeLessThan(4000 * 0.0002);
    await vi.waitFor(() => expect(gateway.store.balance('abort')).toBeCloseTo(1 - g.total_cost, 10), SETTLE);
  });

  it('a 429 upstream: the gateway says Retry-After, and the package waits and asks again; a 503 alike', async () => {
    busyAsked = 0;
    const patient = new OpenAI({ apiKey: gateway.store.firstKeys().apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 2 });
    const { data, response } = await patient.chat.completions.create({ model: 'test/busy', messages: user('x') }).withResponse();
    expect(data.choices[0]!.message.content).toBe('after the wait');
    expect(response.status).toBe(200);
    expect(busyAsked).toBe(2);
    busyAsked = 0;
    const err = (await client.chat.completions.create({ model: 'test/busy', messages: user('x') }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.headers.get('retry-after')).toBe('1');
    expect(err.message).toContain('slow down, busy');
    // A 503 upstream: the gateway's 502 is an InternalServerError, which the package asks again.
    busyAsked = 0;
    const down = (await client.chat.completions.create({ model: 'test/down', messages: user('x') }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(down).toBeInstanceOf(OpenAI.InternalServerError);
    expect([down.status, down.message]).toEqual([502, '502 All providers for the requested models are unavailable: busy: HTTP 503 {"error":{"message":"down for a moment"}}']);
    busyAsked = 0;
    expect((await patient.chat.completions.create({ model: 'test/down', messages: user('x') })).choices[0]!.message.content).toBe('after the wait');
    expect(busyAsked).toBe(2);
  });

  it('error answers become the package error classes, in words', async () => {
    const caught = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    const badVoice = await caught(speaker.audio.speech.create({ model: 'test/tts', voice: 'nobody' as 'alloy', input: 'x' }));
    expect(badVoice).toBeInstanceOf(OpenAI.BadRequestError);
    expect(badVoice!.message).toMatch(/^400 voice: .*"nobody" is not a voice/);
    const wrongKey = await caught(new OpenAI({ apiKey: 'sk-wrong', baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'test/echo', messages: user('x') }));
    expect(wrongKey).toBeInstanceOf(OpenAI.AuthenticationError);
    const broke = gateway.store.createWorkspace('broke', 0);
    const poor = await caught(new OpenAI({ apiKey: broke.apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'test/echo', messages: user('x') }));
    expect(poor!.status).toBe(402);
  });

  it('a stream broken after its first token: the package throws the error chunk, after the tokens', async () => {
    const stream = await client.chat.completions.create({ model: 'test/late', messages: user('x'), stream: true });
    let text = '';
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(text).toBe('token0 token1 token2 ');
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err!.message).toContain('mid-stream');
  });

  it('an upstream that ends its stream without [DONE] after its last chunk: a whole answer, charged its usage', async () => {
    // Before: "the stream ended before its end", an error chunk after the whole answer, and nothing charged.
    const ws = gateway.store.createWorkspace('no-done', 1);
    const caller = new OpenAI({ apiKey: ws.apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0 });
    for (const ask of ['usage please', 'no usage', 'usage unterminated']) {
      const stream = await caller.chat.completions.create({ model: 'test/no-done', messages: user(ask), stream: true, stream_options: { include_usage: true } });
      let text = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const c of stream) {
        text += c.choices[0]?.delta.content ?? '';
        usage ??= c.usage;
      }
      expect(text).toBe('whole answer');
      if (ask !== 'no usage') expect(usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, cost: 0.07 });
      if (ask === 'usage please') expect(gateway.store.balance('no-done')).toBeCloseTo(1 - 0.07, 10);
      const final = await caller.chat.completions.stream({ model: 'test/no-done', messages: user(ask) }).finalChatCompletion();
      expect([final.choices[0]!.message.content, final.choices[0]!.finish_reason]).toEqual(['whole answer', 'stop']);
    }
  });
});
