import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { APICallError, embed, embedMany, generateObject, generateText, stepCountIs, streamObject, streamText, tool, type LanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GATEWAY_PRICES, startTarget, TARGETS, type Target } from '../support/client-targets.js';

// The Vercel AI SDK (`ai`) with the official OpenRouter provider and the generic OpenAI-compatible one,
// against `router serve` in each flavour and as a gateway: the SDK's own parsing of every answer.
type Flavour = 'openrouter' | 'compatible';
const FLAVOURS: Flavour[] = ['openrouter', 'compatible'];

function providerFor(flavour: Flavour, t: Target, apiKey = t.apiKey) {
  if (flavour === 'openrouter') {
    const p = createOpenRouter({ apiKey, baseURL: t.baseURL });
    return { chat: (id: string): LanguageModel => p.chat(id), embedding: (id: string) => p.textEmbeddingModel(id) };
  }
  const p = createOpenAICompatible({ name: 'router', apiKey, baseURL: t.baseURL, includeUsage: true, supportsStructuredOutputs: true });
  return { chat: (id: string): LanguageModel => p.chatModel(id), embedding: (id: string) => p.textEmbeddingModel(id) };
}

/** What the answer's usage says it cost: the OpenRouter provider's metadata, or the raw usage the compatible one keeps. */
function reportedCost(flavour: Flavour, r: { providerMetadata?: unknown; usage: { raw?: unknown } }): number {
  if (flavour === 'openrouter') return (r.providerMetadata as { openrouter: { usage: { cost: number } } }).openrouter.usage.cost;
  return (r.usage.raw as { cost: number }).cost;
}

const timeInput = z.object({ zone: z.enum(['UTC', 'CET']), hours24: z.boolean() });
const weatherTools = {
  get_weather: tool({ description: 'the weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, celsius: 21 }) }),
  get_time: tool({ description: 'the time in a zone', inputSchema: timeInput, execute: async ({ zone }) => ({ zone, time: '12:00' }) }),
};
const person = z.object({ name: z.string(), age: z.number().int(), tags: z.array(z.string()) });

describe.each(TARGETS)('the AI SDK against router serve (%s)', (kind) => {
  let t: Target;
  beforeAll(async () => {
    t = await startTarget(kind);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe.each(FLAVOURS)('through the %s provider', (flavour) => {
    const model = (m: 'echo' | 'lorem' | 'tools' | 'thinker') => providerFor(flavour, t).chat(t.model(m));

    it('generateText: the text, usage, finish reason and model; the cost it reports is the generation kept', async () => {
      const r = await generateText({ model: model('echo'), prompt: 'hello there', maxRetries: 0 });
      expect([r.text, r.finishReason, r.response.modelId]).toEqual(['hello there', 'stop', t.model('echo')]);
      const g = await t.generation(r.response.id);
      expect([r.usage.inputTokens, r.usage.outputTokens, r.usage.totalTokens]).toEqual([g.tokens_prompt, g.tokens_completion, g.tokens_prompt + g.tokens_completion]);
      expect(reportedCost(flavour, r)).toBeCloseTo(g.total_cost, 12);
      if (kind === 'gateway') expect(g.total_cost).toBeCloseTo(g.tokens_prompt * GATEWAY_PRICES.echo.prompt + g.tokens_completion * GATEWAY_PRICES.echo.completion, 12);
      if (flavour === 'openrouter') expect(t.providers).toContain((r.providerMetadata as { openrouter: { provider: string } }).openrouter.provider);
    });

    it('streamText: the same words as a whole answer, then usage and cost, and finish reason stop', async () => {
      const whole = await generateText({ model: model('lorem'), prompt: 'write 12 words', maxRetries: 0 });
      const s = streamText({ model: model('lorem'), prompt: 'write 12 words', maxRetries: 0 });
      let text = '';
      let deltas = 0;
      for await (const d of s.textStream) {
        text += d;
        deltas++;
      }
      expect(text).toBe(whole.text);
      expect(deltas).toBeGreaterThan(1);
      expect(await s.finishReason).toBe('stop');
      const usage = await s.usage;
      expect([usage.inputTokens, usage.outputTokens]).toEqual([whole.usage.inputTokens, whole.usage.outputTokens]);
      expect(reportedCost(flavour, { providerMetadata: await s.providerMetadata, usage })).toBeCloseTo(reportedCost(flavour, whole), 12);
    });

    it('reasoning comes apart from the answer, whole and streamed, with its tokens counted', async () => {
      const r = await generateText({ model: model('thinker'), prompt: 'think', maxRetries: 0 });
      expect(r.text).toBe('Having thought it over: think');
      expect(r.reasoningText).toContain('"think"');
      expect(r.usage.outputTokenDetails.reasoningTokens).toBeGreaterThan(0);
      const s = streamText({ model: model('thinker'), prompt: 'think', maxRetries: 0 });
      expect([await s.text, await s.reasoningText]).toEqual([r.text, r.reasoningText]);
    });

    it('generateObject and streamObject with a zod schema: objects that validate, partials that grow', async () => {
      const { object } = await generateObject({ model: model('echo'), schema: person, prompt: 'a person', maxRetries: 0 });
      expect(person.safeParse(object).success).toBe(true);
      const list = await generateObject({ model: model('echo'), output: 'array', schema: person, prompt: 'people', maxRetries: 0 });
      expect(list.object.length).toBeGreaterThan(0);
      const colour = await generateObject({ model: model('echo'), output: 'enum', enum: ['red', 'blue'], prompt: 'a colour', maxRetries: 0 });
      expect(['red', 'blue']).toContain(colour.object);
      const s = streamObject({ model: model('echo'), schema: person, prompt: 'a person', maxRetries: 0 });
      const partials: unknown[] = [];
      for await (const p of s.partialObjectStream) partials.push(p);
      expect(partials.length).toBeGreaterThan(1);
      const final = await s.object;
      expect(person.safeParse(final).success).toBe(true);
      expect(partials.at(-1)).toEqual(final);
    });

    it('tools: called with input that fits the schema, run, and answered from, over steps (stopWhen), whole and streamed', async () => {
      const r = await generateText({ model: model('tools'), tools: weatherTools, prompt: 'use get_time', stopWhen: stepCountIs(3), maxRetries: 0 });
      expect(r.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
      const call = r.steps[0]!.toolCalls[0]!;
      expect(call.toolName).toBe('get_time');
      expect(timeInput.safeParse(call.input).success).toBe(true);
      expect(r.steps[0]!.toolResults[0]!.output).toMatchObject({ time: '12:00' });
      expect(r.text).toContain('get_time answered');
      const s = streamText({ model: model('tools'), tools: weatherTools, prompt: 'use get_time', stopWhen: stepCountIs(3), maxRetries: 0 });
      const inputDeltas: string[] = [];
      for await (const part of s.fullStream) if (part.type === 'tool-input-delta') inputDeltas.push(part.delta);
      expect(inputDeltas.join('')).toBe(JSON.stringify(call.input));
      expect([await s.text, (await s.steps).length]).toEqual([r.text, 2]);
      const chosen = await generateText({ model: model('tools'), tools: weatherTools, toolChoice: { type: 'tool', toolName: 'get_weather' }, prompt: 'hello', stopWhen: stepCountIs(1), maxRetries: 0 });
      expect(chosen.toolCalls.map((c) => c.toolName)).toEqual(['get_weather']);
      const none = await generateText({ model: model('tools'), tools: weatherTools, toolChoice: 'none', prompt: 'use get_time', maxRetries: 0 });
      expect(none.toolCalls).toEqual([]);
    });

    it("a tool's output in content parts is read as their text, as the model reads a user's parts", async () => {
      // The OpenRouter provider sends `toModelOutput` content as a tool message's array of text parts (the compatible
      // one as a JSON string of them). Before: local/tools answered with that array's JSON for the first.
      const parts = tool({ inputSchema: z.object({ city: z.string() }), execute: async () => 'unused', toModelOutput: () => ({ type: 'content', value: [{ type: 'text', text: 'sunny, ' }, { type: 'text', text: '21 C' }] }) });
      const r = await generateText({ model: model('tools'), tools: { get_weather: parts }, prompt: 'use get_weather', stopWhen: stepCountIs(2), maxRetries: 0 });
      const seen = flavour === 'openrouter' ? 'sunny, 21 C' : JSON.stringify([{ type: 'text', text: 'sunny, ' }, { type: 'text', text: '21 C' }]);
      expect(r.text).toBe(`From the tool results: get_weather answered: ${seen}`);
    });

    it('embeddings: embed and embedMany agree, with their usage', async () => {
      const m = providerFor(flavour, t).embedding(t.model('embed'));
      const one = await embed({ model: m, value: 'hello', maxRetries: 0 });
      const many = await embedMany({ model: m, values: ['hello', 'world'], maxRetries: 0 });
      expect(many.embeddings).toHaveLength(2);
      expect(many.embeddings[0]).toEqual(one.embedding);
      expect(many.embeddings[0]).not.toEqual(many.embeddings[1]);
      expect(one.usage.tokens).toBeGreaterThan(0);
      expect(many.usage.tokens).toBeGreaterThan(one.usage.tokens);
    });

    it('an abort mid-stream: the stream ends with an abort part, the generation is cancelled and charged less than the whole', async () => {
      const key = t.keyWith(`abort-${flavour}`, 1);
      const abort = new AbortController();
      const s = streamText({ model: providerFor(flavour, t, key).chat(t.model('lorem')), prompt: 'write 2000 words', maxOutputTokens: 4000, abortSignal: abort.signal, includeRawChunks: true, maxRetries: 0 });
      let id = '';
      let deltas = 0;
      const kinds = new Set<string>();
      for await (const part of s.fullStream) {
        kinds.add(part.type);
        if (part.type === 'raw') id ||= (part.rawValue as { id: string }).id;
        if (part.type === 'text-delta' && ++deltas === 3) abort.abort();
      }
      expect(kinds.has('abort')).toBe(true);
      expect(kinds.has('finish')).toBe(false);
      const g = await t.generation(id, key);
      expect(g.cancelled).toBe(true);
      expect(g.tokens_completion).toBeGreaterThanOrEqual(2);
      expect(g.tokens_completion).toBeLessThan(2000);
    });

    it('401, 402 and 429 are APICallErrors with the status, the words and whether to retry; a stream says them as an error part', async () => {
      const caught = (apiKey: string) => generateText({ model: providerFor(flavour, t, apiKey).chat(t.model('echo')), prompt: 'x', maxRetries: 0 }).then(() => undefined, (e: unknown) => e as APICallError);
      const wrongKey = await caught('sk-wrong');
      expect(APICallError.isInstance(wrongKey)).toBe(true);
      expect([wrongKey!.statusCode, wrongKey!.isRetryable, wrongKey!.message]).toEqual([401, false, 'Invalid API key']);
      const poor = await caught(t.keyWith(`broke-${flavour}`, 0));
      expect([poor!.statusCode, poor!.isRetryable]).toEqual([402, false]);
      expect(poor!.message).toMatch(/^Insufficient credits/);
      await t.rateLimitNext(1);
      const busy = await caught(t.apiKey);
      expect([busy!.statusCode, busy!.isRetryable, busy!.responseHeaders?.['retry-after']]).toEqual([429, true, '1']);
      const s = streamText({ model: providerFor(flavour, t, 'sk-wrong').chat(t.model('echo')), prompt: 'x', maxRetries: 0, onError: () => {} });
      const errors: unknown[] = [];
      for await (const part of s.fullStream) if (part.type === 'error') errors.push(part.error);
      expect(errors).toHaveLength(1);
      expect((errors[0] as APICallError).statusCode).toBe(401);
    });

    // The retry is the SDK core's, the same for both providers: asked once per target, it waits a second.
    if (flavour === 'openrouter') it('a 429 with Retry-After: the SDK waits and asks again, and the answer comes', async () => {
      await t.rateLimitNext(1);
      const r = await generateText({ model: model('echo'), prompt: 'after the wait', maxRetries: 2 });
      expect(r.text).toBe('after the wait');
    });
  });
});
