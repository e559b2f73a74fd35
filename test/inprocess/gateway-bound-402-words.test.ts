import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersHi, pricedGateway } from '../support/upstreams.js';

// A gateway holds the most a priced request may cost (docs/gateway.md) and refuses with 402 when the
// balance does not cover it. The refusal said "this request costs $X" of that bound, many times what
// the answer would have cost ("hi" is 1 token): a caller read it as the price. Seen through the openai
// package over HTTP, as a program using the gateway sees it.
let gw: Awaited<ReturnType<typeof pricedGateway>>;

beforeAll(async () => {
  gw = await pricedGateway(answersHi, 0.001);
});

afterAll(async () => {
  await gw?.close();
  await gw?.upstream.close();
});

describe('the 402 of a held bound', () => {
  it('says the most the request may cost, and the balance; an answer within the balance is charged what it cost', async () => {
    const { apiKey, managementKey } = gw.gateway.store.createWorkspace('bound-words', 0.5);
    const client = new OpenAI({ apiKey, baseURL: `${gw.gateway.apiRoot}/v1`, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'test/m', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toMatch(/^402 Insufficient credits: this request may cost up to \$1\.\d+, the balance is \$0\.5\. /);
    const answer = await client.chat.completions.create({ model: 'test/m', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    expect(answer.choices[0]!.message.content).toBe('hi');
    // Its 5 tokens at $0.001, not the bound.
    const credits = await new OpenAI({ apiKey: managementKey, baseURL: `${gw.gateway.apiRoot}/v1` }).get<{ data: { total_usage: number } }>('/credits');
    expect(credits.data.total_usage).toBeCloseTo(0.005, 9);
  });
});
