import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { anthropicPerTarget, anthropicRoot } from '../support/anthropic-target.js';
import { GATEWAY_PRICES, TARGETS, type Target } from '../support/client-targets.js';

// The official `@anthropic-ai/sdk` (what Claude-Code-style clients use) pointed at `router serve` in each
// flavour and as a gateway over an OpenAI-compatible upstream: `POST /v1/messages`, parsed by the SDK itself.
const weather: Anthropic.Tool = { name: 'get_weather', description: 'the weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe.each(TARGETS)('@anthropic-ai/sdk against router serve (%s)', (kind) => {
  let t!: Target;
  let client!: Anthropic;
  const root = () => anthropicRoot(t);
  anthropicPerTarget(kind, (target, c) => ((t = target), (client = c)));

  it('messages.create: a text block, end_turn, usage; the generation kept is what it charged', async () => {
    const m = await client.messages.create({ model: t.model('echo'), max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] });
    expect([m.type, m.role, m.model, m.stop_reason, m.content]).toEqual(['message', 'assistant', t.model('echo'), 'end_turn', [{ type: 'text', text: 'hello there', citations: null }]]);
    const g = await t.generation(m.id);
    expect([m.usage.input_tokens, m.usage.output_tokens]).toEqual([g.tokens_prompt, g.tokens_completion]);
    expect(t.providers).toContain(g.provider_name);
    expect((m.usage as unknown as { cost: number }).cost).toBeCloseTo(g.total_cost, 12);
    expect(g.total_cost).toBeGreaterThan(0);
    if (kind === 'gateway') expect(g.total_cost).toBeCloseTo(g.tokens_prompt * GATEWAY_PRICES.echo.prompt + g.tokens_completion * GATEWAY_PRICES.echo.completion, 12);
  });

  it('the beta client (Claude Code\'s: `/v1/messages?beta=true`, `anthropic-beta` headers) is answered alike', async () => {
    const m = await client.beta.messages.create({ model: t.model('echo'), max_tokens: 16, betas: ['interleaved-thinking-2025-05-14'], messages: [{ role: 'user', content: 'beta hi' }] });
    expect([m.stop_reason, m.content]).toEqual(['end_turn', [{ type: 'text', text: 'beta hi', citations: null }]]);
    const streamed = await client.beta.messages.stream({ model: t.model('echo'), max_tokens: 16, messages: [{ role: 'user', content: 'beta hi' }] }).finalMessage();
    expect(streamed.content).toEqual(m.content);
  });

  it('a system prompt and a max_tokens cut: stop_reason max_tokens', async () => {
    const m = await client.messages.create({ model: t.model('lorem'), max_tokens: 3, system: [{ type: 'text', text: 'be brief' }], messages: [{ role: 'user', content: 'write 40 words' }] });
    expect(m.stop_reason).toBe('max_tokens');
    expect(m.usage.output_tokens).toBe(3);
  });

  it('messages.stream(...).finalMessage(): the same words as a whole answer, in Anthropic events, usage at the end', async () => {
    const ask = { model: t.model('lorem'), max_tokens: 200, messages: [{ role: 'user' as const, content: 'write 12 words' }] };
    const whole = await client.messages.create(ask);
    const stream = client.messages.stream(ask);
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const m = await stream.finalMessage();
    expect(m.content).toEqual(whole.content);
    expect([m.stop_reason, m.usage.input_tokens, m.usage.output_tokens]).toEqual(['end_turn', whole.usage.input_tokens, whole.usage.output_tokens]);
    const distinct = types.filter((x, i) => x !== types[i - 1]);
    expect(distinct).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    const g = await t.generation(m.id);
    expect(g.tokens_completion).toBe(m.usage.output_tokens);
    expect(g.total_cost).toBeGreaterThan(0);
  });

  it('the thinker: a thinking block before the text, whole and streamed', async () => {
    const ask = { model: t.model('thinker'), max_tokens: 400, thinking: { type: 'enabled' as const, budget_tokens: 200 }, messages: [{ role: 'user' as const, content: 'why is the sky blue' }] };
    const whole = await client.messages.create(ask);
    expect(whole.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect((whole.content[0] as Anthropic.ThinkingBlock).thinking).toContain('why is the sky blue');
    const streamed = await client.messages.stream(ask).finalMessage();
    expect(streamed.content).toEqual(whole.content);
  });

  it('tool use round trip: a tool_use block with input that fits its schema, then an answer from the tool_result', async () => {
    for (const stream of [false, true]) {
      const ask = { model: t.model('tools'), max_tokens: 400, tools: [weather], messages: [{ role: 'user' as const, content: 'weather in Paris?' }] };
      const first = stream ? await client.messages.stream(ask).finalMessage() : await client.messages.create(ask);
      expect(first.stop_reason, `stream: ${stream}`).toBe('tool_use');
      const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(use.name).toBe('get_weather');
      expect(typeof (use.input as { city: unknown }).city).toBe('string');
      const result: Anthropic.MessageParam = { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '{"celsius":21,"sky":"clear"}' }] };
      const next = { ...ask, messages: [...ask.messages, { role: 'assistant' as const, content: first.content }, result] };
      const second = stream ? await client.messages.stream(next).finalMessage() : await client.messages.create(next);
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content.map((b) => b.type)).toEqual(['text']);
      expect((second.content[0] as Anthropic.TextBlock).text).toContain('21');
    }
  });

  it('a Bearer token (authToken) is a key as x-api-key is; errors come in the OpenAPI shape the SDK reads', async () => {
    const bearer = new Anthropic({ authToken: t.apiKey, apiKey: null, baseURL: root(), maxRetries: 0 });
    expect((await bearer.messages.create({ model: t.model('echo'), max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })).content).toEqual([{ type: 'text', text: 'hi', citations: null }]);
    const wrong = new Anthropic({ apiKey: 'sk-wrong', baseURL: root(), maxRetries: 0 });
    const refused = await wrong.messages.create({ model: t.model('echo'), max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((refused as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: 'Invalid API key' } });
    const bad = await client.messages.create({ model: t.model('echo'), max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') } });
    const poor = new Anthropic({ apiKey: t.keyWith(`poor-${kind}`, 0), baseURL: root(), maxRetries: 0 });
    const unpaid = await poor.messages.stream({ model: t.model('echo'), max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).finalMessage().catch((e: unknown) => e);
    expect((unpaid as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
    expect((unpaid as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
  });

  it('a path under /v1/messages no route serves (the SDK\'s countTokens) is a 404 in Anthropic\'s error shape, as is a 405 (any other 4xx\'s type)', async () => {
    const e = await client.messages.countTokens({ model: t.model('echo'), messages: [{ role: 'user', content: 'count me' }] }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(Anthropic.NotFoundError);
    expect((e as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: expect.stringContaining('/v1/messages/count_tokens') } });
    const wrong = await fetch(`${root()}/v1/messages`, { headers: { 'x-api-key': t.apiKey } });
    expect([wrong.status, ((await wrong.json()) as { error: { type: string } }).error.type]).toEqual([405, 'invalid_request_error']);
  });
});
