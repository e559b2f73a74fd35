import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import type { ChatResult, ChatStreamChunk } from '@openrouter/sdk/models';

// The official @openrouter/sdk (strict zod parsing of every answer) against `router serve --flavor
// deployed` that is also a gateway: its models, their answers, generations and credits.
let chain: GatewayChain;
type Sdk = InstanceType<(typeof import('@openrouter/sdk'))['OpenRouter']>;
let sdk: Sdk;
let managed: Sdk;

beforeAll(async () => {
  const yaml = (upstreamRoot: string) => `
providers:
  - name: up
    base_url: ${upstreamRoot}/v1
    api_key_env: UP_KEY
    models: { test/echo: local/echo }
    embedding_models: { test/embed: local/embed }
    prices: { test/echo: { prompt: 0.001, completion: 0.002 }, test/embed: { prompt: 0.0001 } }
`;
  chain = await startGatewayChain('gateway-orsdk', yaml, { gateway: { flavor: 'deployed' } });
  const { OpenRouter } = await import('@openrouter/sdk');
  const keys = chain.gateway.store.firstKeys();
  sdk = new OpenRouter({ apiKey: keys.apiKey, serverURL: `${chain.gateway.apiRoot}/v1` });
  managed = new OpenRouter({ apiKey: keys.managementKey, serverURL: `${chain.gateway.apiRoot}/v1` });
});

afterAll(() => chain?.close());

describe('@openrouter/sdk against a deployed-flavour gateway', () => {
  it('lists the upstream models beside the fake ones, each parsed', async () => {
    const ids: string[] = [];
    for await (const page of await sdk.models.list()) ids.push(...page.result.data.map((m) => m.id));
    expect(ids).toContain('test/echo');
    expect(ids).toContain('local/echo');
  });

  it('chat from the upstream, whole and streamed; its generation found; the credits used say its cost', async () => {
    const before = (await managed.credits.getCredits()).data.totalUsage;
    const c = (await sdk.chat.send({ chatRequest: { model: 'test/echo', messages: [{ role: 'user', content: 'from afar' }] } })) as ChatResult;
    expect([c.model, c.choices[0]!.message.content]).toEqual(['test/echo', 'from afar']);
    const cost = c.usage!.cost!;
    expect(cost).toBeCloseTo(c.usage!.promptTokens * 0.001 + c.usage!.completionTokens * 0.002, 10);
    const g = await sdk.generations.getGeneration({ id: c.id });
    expect([g.data.model, g.data.providerName, g.data.totalCost]).toEqual(['test/echo', 'up', cost]);
    const stream = (await sdk.chat.send({ chatRequest: { model: 'test/echo', stream: true, messages: [{ role: 'user', content: 'a b c' }] } })) as AsyncIterable<ChatStreamChunk>;
    let text = '';
    let streamedCost = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      streamedCost = chunk.usage?.cost ?? streamedCost;
    }
    expect(text).toBe('a b c');
    const after = (await managed.credits.getCredits()).data.totalUsage;
    expect(after - before).toBeCloseTo(cost + streamedCost, 10);
  });

  it('embeddings from the upstream, charged at the configured price', async () => {
    const e = await sdk.embeddings.generate({ requestBody: { model: 'test/embed', input: 'hello', dimensions: 4 } });
    if (typeof e === 'string') throw new Error(`embeddings answered text: ${e}`);
    expect(e.data[0]!.embedding).toHaveLength(4);
    expect(e.usage!.cost).toBeCloseTo(e.usage!.promptTokens * 0.0001, 10);
  });
});
