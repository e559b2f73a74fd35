import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LLMock } from '@copilotkit/aimock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MessageAssembler, RouterClient, type ChatChunk } from '../../src/client/index.js';
import { aimockGateway, startAimock, type AimockGateway } from '../support/aimock.js';
import { SETTLE } from '../support/until.js';
import { countTokens, round } from '../../src/emulator/models/models.js';

// `router serve --providers` over an upstream we did not write that streams: aimock (`@copilotkit/aimock`),
// as an OpenAI-compatible server (`/v1`) priced in the providers file, and as an OpenRouter-shaped one
// (`/api/v1`: `: OPENROUTER PROCESSING` comments, its own `usage.cost`). Asked with our client and our CLI.
let mock: LLMock;
let gw: AimockGateway;
let client: RouterClient;

const HELLO = 'Hi there, from aimock!';
const WEATHER = { name: 'get_weather', arguments: '{"city":"Paris"}' };
const TOOLS = [{ type: 'function' as const, function: { name: 'get_weather', description: 'the weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
/** The file's prices, USD a token: 10 prompt and 5 completion tokens cost 0.02. */
const PRICE = { prompt: 0.001, completion: 0.002 };

beforeAll(async () => {
  mock = await startAimock((m) => {
    // First: the turn after a tool round still has "weather" as its user message.
    m.on({ toolResultContains: 'sunny and 21' }, { content: 'It is sunny in Paris.' });
    m.onMessage('hello', { content: HELLO, usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    m.onMessage('weather', { toolCalls: [WEATHER], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    m.onMessage('two cities', { content: 'Checking both.', toolCalls: [WEATHER, { name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    m.onMessage('priced upstream', { content: 'aimock priced this', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cost: 0.0042 } }, { openRouterProcessing: true });
    m.onMessage('respond', { content: 'Hi from the Responses API', reasoning: 'A greeting.', usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
    m.onEmbedding('embed me', { embedding: [0.25, -0.5, 1] });
  });
  gw = await aimockGateway(`providers:
  - name: aimock
    base_url: ${mock.url}/v1
    responses: true
    models: { test/chat: gpt-4o }
    embedding_models: { test/embed: text-embedding-3-small }
    prices: { test/chat: { prompt: ${PRICE.prompt}, completion: ${PRICE.completion} }, test/embed: { prompt: 0.0001 } }
  - { name: aimock-or, base_url: "${mock.url}/api/v1", models: { test/or: openai/gpt-4o } }
`);
  client = new RouterClient({ apiRoot: gw.gateway.apiRoot, apiKey: gw.key, maxRetries: 0 });
});

afterAll(async () => {
  await client?.close();
  await gw?.close();
  await mock?.stop();
});

const cli = (args: string[]) => gw.cli(args);
const generation = (id: string) => vi.waitFor(() => client.generations.get(id), SETTLE);
const messages = (content: string) => [{ role: 'user' as const, content }];

async function streamed(model: string, content: string, extra: Record<string, unknown> = {}) {
  const chunks: ChatChunk[] = [];
  const message = new MessageAssembler();
  for await (const chunk of await client.chat.stream({ model, messages: messages(content), ...extra }, { routerMetadata: true })) {
    chunks.push(chunk);
    message.add(chunk);
  }
  return { chunks, message: message.message(), usage: chunks.find((c) => c.usage)?.usage as any, meta: (chunks.find((c: any) => c.router_metadata) as any)?.router_metadata };
}

describe('a chat answer from aimock, whole and streamed', () => {
  it('whole: the fixture text, usage at the file prices, router_metadata naming the attempt, a generation kept', async () => {
    const answer: any = await client.chat.create({ model: 'test/chat', messages: messages('hello') }, { routerMetadata: true });
    expect(answer.choices[0].message.content).toBe(HELLO);
    expect([answer.model, answer.provider]).toEqual(['test/chat', 'aimock']);
    expect(answer.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5 });
    expect(answer.usage.cost).toBeCloseTo(10 * PRICE.prompt + 5 * PRICE.completion, 10);
    expect(answer.router_metadata).toMatchObject({ attempt: 1, strategy: 'direct', attempts: [{ provider: 'aimock', model: 'test/chat', ok: true }] });
    const g = await generation(answer.id);
    expect(g).toMatchObject({ model: 'test/chat', provider_name: 'aimock', tokens_prompt: 10, tokens_completion: 5, streamed: false });
    expect(g.total_cost).toBeCloseTo(0.02, 10);
  });

  it('streamed: the same text in pieces, the usage chunk priced, router_metadata on the first chunk', async () => {
    const { chunks, message, usage, meta } = await streamed('test/chat', 'hello');
    expect(message.content).toBe(HELLO);
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(0);
    expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5 });
    expect(usage.cost).toBeCloseTo(0.02, 10);
    expect(meta).toMatchObject({ attempt: 1, attempts: [{ provider: 'aimock', ok: true }] });
    expect((await generation(chunks[0]!.id)).streamed).toBe(true);
  });

  it('the OpenRouter-shaped surface: its keep-alive comments skipped, its own usage.cost charged', async () => {
    const whole: any = await client.chat.create({ model: 'test/or', messages: messages('priced upstream') });
    expect([whole.choices[0].message.content, whole.provider, whole.usage.cost]).toEqual(['aimock priced this', 'aimock-or', 0.0042]);
    const { message, usage } = await streamed('test/or', 'priced upstream');
    expect([message.content, usage.cost]).toEqual(['aimock priced this', 0.0042]);
    expect((await generation(whole.id)).total_cost).toBe(0.0042);
  });

  it('router chat: streamed to stdout, --no-stream --usage, --json', async () => {
    expect(await cli(['chat', '-m', 'test/chat', 'hello'])).toMatchObject({ code: 0, stdout: `${HELLO}\n` });
    const whole = await cli(['chat', '-m', 'test/chat', '--no-stream', '--usage', 'hello']);
    expect([whole.code, whole.stdout]).toEqual([0, `${HELLO}\n`]);
    expect(whole.stderr).toBe('usage: 10 prompt + 5 completion = 15 tokens, cost $0.020000\n');
    const json = await cli(['chat', '-m', 'test/or', '--no-stream', '--json', 'priced upstream']);
    expect(JSON.parse(json.stdout)).toMatchObject({ model: 'test/or', provider: 'aimock-or', choices: [{ message: { content: 'aimock priced this' } }], usage: { cost: 0.0042 } });
  });
});

describe('Responses from aimock', () => {
  it('router responses, streamed and not: the text, the reasoning on stderr, usage at the file prices', async () => {
    for (const how of ['--stream', '--no-stream']) {
      const res = await cli(['responses', '-m', 'test/chat', how, '--usage', '--show-reasoning', 'respond']);
      expect([res.code, res.stdout, res.stderr]).toEqual([0, 'Hi from the Responses API\n', 'A greeting.\nusage: 10 input + 5 output = 15 tokens, cost $0.020000\n']);
    }
  });
});

describe('tool calls from aimock, relayed', () => {
  it('whole and streamed: the call named, its arguments whole, finish_reason tool_calls', async () => {
    const whole: any = await client.chat.create({ model: 'test/chat', messages: messages('weather'), tools: TOOLS });
    expect(whole.choices[0].finish_reason).toBe('tool_calls');
    expect(whole.choices[0].message.tool_calls).toEqual([{ id: expect.any(String), type: 'function', function: WEATHER }]);
    const { chunks, message, usage } = await streamed('test/chat', 'weather', { tools: TOOLS });
    expect(message.tool_calls).toEqual([{ index: 0, id: expect.any(String), type: 'function', function: WEATHER }]);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(usage.cost).toBeCloseTo(0.02, 10);
  });

  it('text and two calls in one answer, streamed: each call whole under its index', async () => {
    const { message } = await streamed('test/chat', 'two cities', { tools: TOOLS });
    expect(message.content).toBe('Checking both.');
    expect(message.tool_calls?.map((t: any) => [t.index, t.function.arguments])).toEqual([
      [0, WEATHER.arguments],
      [1, '{"city":"Oslo"}'],
    ]);
  });

  it('router chat --tools: the call run, its result sent back, the answer to it printed (streamed and not)', async () => {
    const file = join(gw.dir, 'tools.json');
    const run = [process.execPath, '-e', 'process.stdout.write("sunny and 21")'];
    writeFileSync(file, JSON.stringify([{ type: 'function', name: 'get_weather', parameters: TOOLS[0].function.parameters, command: run }]));
    for (const how of ['--stream', '--no-stream']) {
      const res = await cli(['chat', '-m', 'test/chat', how, '--tools', file, 'weather']);
      expect([res.code, res.stdout]).toEqual([0, 'It is sunny in Paris.\n']);
    }
    const second = mock.getRequests().filter((r) => JSON.stringify(r.body).includes('sunny and 21'));
    expect(second).toHaveLength(2);
  });
});

describe('embeddings from aimock', () => {
  it('the fixture vector, under the gateway id; a generation kept', async () => {
    const res: any = await client.embeddings.create({ model: 'test/embed', input: 'embed me' });
    expect(res.data[0].embedding).toEqual([0.25, -0.5, 1]);
    expect([res.model, res.provider]).toEqual(['test/embed', 'aimock']);
    expect((await generation(res.id)).provider_name).toBe('aimock');
    const out = await cli(['embed', '-m', 'test/embed', '--jsonl', 'embed me']);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ index: 0, input: 'embed me', embedding: [0.25, -0.5, 1] });
  });

  it('aimock reports 0 prompt tokens: the input counted as the emulator counts it, charged at the file’s price', async () => {
    const before = gw.gateway.store.balance('default');
    const res: any = await client.embeddings.create({ model: 'test/embed', input: 'embed me' });
    const tokens = countTokens('embed me');
    expect(tokens).toBeGreaterThan(0);
    // Before: usage {prompt_tokens: 0, total_tokens: 0, cost: 0}, the generation 0 tokens at $0.
    expect(res.usage).toMatchObject({ prompt_tokens: tokens, total_tokens: tokens, cost: round(tokens * 0.0001) });
    expect(await generation(res.id)).toMatchObject({ tokens_prompt: tokens, total_cost: round(tokens * 0.0001) });
    expect(gw.gateway.store.balance('default')).toBeCloseTo(before - round(tokens * 0.0001), 10);
  });
});
