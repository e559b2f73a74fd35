import { AIMessage, HumanMessage, ToolMessage, type AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTarget, TARGETS, type Target } from '../support/client-targets.js';

// LangChain JS's ChatOpenAI and OpenAIEmbeddings (`@langchain/openai`, on its own copy of the openai
// package) with configuration.baseURL at `router serve` in each flavour and as a gateway.
const weather = { type: 'function' as const, function: { name: 'get_weather', description: 'the weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const person = z.object({ name: z.string(), age: z.number().int() });

describe.each(TARGETS)('LangChain ChatOpenAI against router serve (%s)', (kind) => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget(kind);
  });
  afterAll(async () => {
    await t?.close();
  });

  const chat = (m: 'echo' | 'lorem' | 'tools' | 'thinker', more: { apiKey?: string; maxRetries?: number; useResponsesApi?: boolean } = {}) =>
    new ChatOpenAI({ model: t.model(m), apiKey: more.apiKey ?? t.apiKey, maxRetries: more.maxRetries ?? 0, useResponsesApi: more.useResponsesApi, configuration: { baseURL: t.baseURL } });

  it('invoke: the content, usage_metadata and the response metadata; the generation kept has those tokens', async () => {
    const r = await chat('echo').invoke('hello there');
    expect(r.content).toBe('hello there');
    expect(r.response_metadata).toMatchObject({ finish_reason: 'stop', model_name: t.model('echo') });
    const g = await t.generation(r.id!);
    expect(r.usage_metadata).toMatchObject({ input_tokens: g.tokens_prompt, output_tokens: g.tokens_completion, total_tokens: g.tokens_prompt + g.tokens_completion });
    const thought = await chat('thinker').invoke('think');
    expect(thought.content).toBe('Having thought it over: think');
    expect(thought.usage_metadata!.output_token_details!.reasoning).toBeGreaterThan(0);
  });

  it('stream: chunks that add up to the whole answer, the last with usage', async () => {
    const whole = await chat('lorem').invoke('write 12 words');
    let text = '';
    let chunks = 0;
    let usage: AIMessageChunk['usage_metadata'];
    for await (const c of await chat('lorem').stream('write 12 words')) {
      text += c.content as string;
      chunks++;
      usage = c.usage_metadata ?? usage;
    }
    expect(text).toBe(whole.content);
    expect(chunks).toBeGreaterThan(2);
    expect(usage).toMatchObject({ input_tokens: whole.usage_metadata!.input_tokens, output_tokens: whole.usage_metadata!.output_tokens });
  });

  it('withStructuredOutput: a zod object by JSON schema and by function calling, and with the raw message', async () => {
    const bySchema = await chat('echo').withStructuredOutput(person, { name: 'person' }).invoke('a person');
    expect(person.safeParse(bySchema).success).toBe(true);
    const byCall = await chat('tools').withStructuredOutput(person, { name: 'person', method: 'functionCalling' }).invoke('a person');
    expect(person.safeParse(byCall).success).toBe(true);
    const withRaw = await chat('echo').withStructuredOutput(person, { name: 'person', includeRaw: true }).invoke('a person');
    expect(JSON.parse(withRaw.raw.content as string)).toEqual(withRaw.parsed);
  });

  it('bindTools: the call parsed whole and from a stream alike; its result answered from', async () => {
    const model = chat('tools').bindTools([weather]);
    const first = await model.invoke('Paris');
    expect(first.response_metadata.finish_reason).toBe('tool_calls');
    expect(first.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Paris' }, type: 'tool_call' })]);
    let merged: AIMessageChunk | undefined;
    for await (const c of await model.stream('Paris')) merged = merged ? merged.concat(c) : c;
    expect(merged!.tool_calls!.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Paris' }]]);
    const call = first.tool_calls![0]!;
    const answer = await model.invoke([new HumanMessage('Paris'), new AIMessage({ content: '', tool_calls: [call] }), new ToolMessage({ tool_call_id: call.id!, content: '{"celsius":21}' })]);
    expect(answer.content).toBe('From the tool results: get_weather answered: {"celsius":21}');
    expect(answer.tool_calls).toEqual([]);
    // A ToolMessage's content blocks go out as the tool message's text parts, read as their text.
    const blocks = await model.invoke([new HumanMessage('Paris'), new AIMessage({ content: '', tool_calls: [call] }), new ToolMessage({ tool_call_id: call.id!, content: [{ type: 'text', text: 'sunny' }] })]);
    expect(blocks.content).toBe('From the tool results: get_weather answered: sunny');
  });

  it('useResponsesApi: invoke and stream with usage, reasoning apart, bindTools answered, withStructuredOutput', async () => {
    const responses = { useResponsesApi: true };
    const r = await chat('echo', responses).invoke('hi there');
    expect([r.text, r.usage_metadata?.input_tokens, r.usage_metadata?.output_tokens]).toEqual(['hi there', 4, 2]);
    let text = '';
    let usage: AIMessageChunk['usage_metadata'];
    for await (const c of await chat('lorem', responses).stream('write 12 words')) {
      text += c.text;
      usage = c.usage_metadata ?? usage;
    }
    expect(text).toBe((await chat('lorem').invoke('write 12 words')).content);
    expect(usage!.output_tokens).toBeGreaterThan(0);
    const thought = await chat('thinker', responses).invoke('think');
    expect(thought.text).toBe('Having thought it over: think');
    expect((thought.additional_kwargs.reasoning as { summary: { text: string }[] }).summary[0]!.text).toContain('"think"');
    const model = chat('tools', responses).bindTools([weather]);
    const first = await model.invoke('Paris');
    expect(first.tool_calls!.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Paris' }]]);
    const answer = await model.invoke([new HumanMessage('Paris'), first, new ToolMessage({ tool_call_id: first.tool_calls![0]!.id!, content: '{"celsius":21}' })]);
    expect(answer.text).toBe('From the tool results: get_weather answered: {"celsius":21}');
    expect(person.safeParse(await chat('echo', responses).withStructuredOutput(person, { name: 'person' }).invoke('a person')).success).toBe(true);
  });

  it('OpenAIEmbeddings: a query and documents, the same text the same vector; dimensions honoured', async () => {
    const embeddings = new OpenAIEmbeddings({ model: t.model('embed'), apiKey: t.apiKey, maxRetries: 0, configuration: { baseURL: t.baseURL } });
    const query = await embeddings.embedQuery('hello');
    const docs = await embeddings.embedDocuments(['hello', 'world']);
    expect(docs).toHaveLength(2);
    docs[0]!.forEach((x, i) => expect(x).toBeCloseTo(query[i]!, 6));
    expect(docs[1]).not.toEqual(docs[0]);
    const small = new OpenAIEmbeddings({ model: t.model('embed'), dimensions: 8, apiKey: t.apiKey, maxRetries: 0, configuration: { baseURL: t.baseURL } });
    expect(await small.embedQuery('hello')).toHaveLength(8);
  });

  it('401, 402 and 429 become the openai package errors LangChain throws, with their status and words', async () => {
    const caught = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error & { status?: number; lc_error_code?: string });
    const wrongKey = await caught(chat('echo', { apiKey: 'sk-wrong' }).invoke('x'));
    expect([wrongKey!.constructor.name, wrongKey!.status, wrongKey!.lc_error_code]).toEqual(['AuthenticationError', 401, 'MODEL_AUTHENTICATION']);
    const poor = await caught(chat('echo', { apiKey: t.keyWith('broke', 0) }).invoke('x'));
    expect(poor!.status).toBe(402);
    expect(poor!.message).toMatch(/^402 Insufficient credits/);
    await t.rateLimitNext(1);
    const busy = await caught(chat('echo').invoke('x'));
    expect([busy!.constructor.name, busy!.status, busy!.lc_error_code]).toEqual(['RateLimitError', 429, 'MODEL_RATE_LIMIT']);
    await t.rateLimitNext(1);
    expect((await chat('echo', { maxRetries: 2 }).invoke('after the wait')).content).toBe('after the wait');
  });

  it('an abort mid-stream: the stream throws AbortError and the generation is cancelled', async () => {
    const key = t.keyWith('abort', 1);
    const abort = new AbortController();
    let id = '';
    let parts = 0;
    const err = await (async () => {
      for await (const c of await chat('lorem', { apiKey: key }).stream('write 2000 words', { signal: abort.signal })) {
        id ||= c.id ?? '';
        if (c.content && ++parts === 3) abort.abort();
      }
    })().then(() => undefined, (e: unknown) => e as Error);
    expect(err?.name).toBe('AbortError');
    const g = await t.generation(id, key);
    expect(g.cancelled).toBe(true);
    expect(g.tokens_completion).toBeLessThan(2000);
  });
});
