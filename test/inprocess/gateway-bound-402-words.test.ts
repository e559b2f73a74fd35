import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersHi, failing, localUpstream, pricedGateway, testGateway } from '../support/upstreams.js';

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

describe('one wording for every 402 of credits', () => {
  it('an unbounded gateway request, a bounded one and a fake model say the request and the balance alike', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('spent', 0);
    const ask = async (body: Record<string, unknown>) => {
      const res = await gw.call('POST', '/v1/chat/completions', apiKey, { messages: [{ role: 'user', content: 'hi' }], ...body });
      expect(res.status).toBe(402);
      return ((await res.json()) as { error: { message: string } }).error.message;
    };
    const worded = /^Insufficient credits: this request (needs a balance above \$0|may cost up to \$[\d.]+|costs \$[\d.]+), the balance is \$0\. Add more credits to continue\.$/;
    // Unbounded (no max_tokens, the model no max_completion_tokens): its cost is not known before the answer.
    // Before: "Insufficient credits. Add more credits to continue.", without the amounts the others say.
    expect(await ask({ model: 'test/m' })).toBe('Insufficient credits: this request needs a balance above $0, the balance is $0. Add more credits to continue.');
    expect(await ask({ model: 'test/m', max_tokens: 10 })).toMatch(worded);
    expect(await ask({ model: 'local/echo' })).toMatch(worded);
    // A batch, whose cost is known at its end only, is refused in the same words.
    const batch = await gw.call('POST', '/v1/batches', apiKey, { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }] } }] });
    expect(batch.status).toBe(402);
    expect(((await batch.json()) as { error: { message: string } }).error.message).toMatch(worded);
  });

  it('Get a batch whose finalized cost the balance does not cover says the cost and the balance in plain decimals', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('batch-owes', 1e-9);
    const created = await gw.call('POST', '/v1/batches', apiKey, { endpoint: '/v1/embeddings', model: 'local/embed', completion_window: '24h', requests: [{ custom_id: 'a', body: { input: 'a few words to embed' } }] });
    const { id } = (await created.json()) as { id: string };
    let got = await gw.call('GET', `/v1/batches/${id}`, apiKey);
    while (got.status === 200) {
      const seen = (await got.json()) as { status: string };
      expect(seen.status).not.toBe('failed');
      await new Promise((r) => setTimeout(r, 20));
      got = await gw.call('GET', `/v1/batches/${id}`, apiKey);
    }
    expect(got.status).toBe(402);
    // Before: "The finalized cost of batch … ($5e-8) exceeds the available balance; …": no balance, an exponent.
    expect(((await got.json()) as { error: { message: string } }).error.message).toMatch(new RegExp(`^Insufficient credits: the finalized cost of batch ${id} is \\$0\\.0000000\\d+, the balance is \\$0\\.000000001\\. Add more credits, then get it again\\.$`));
  });
});

describe("a provider's 402", () => {
  it('is the gateway’s account at the provider, not the caller’s: the next provider answers; alone, a 502', async () => {
    const spent = await failing(402);
    const hi = await localUpstream(answersHi);
    const gateway = await testGateway(`providers:\n  - { name: spent, base_url: "${spent.baseUrl}", models: { test/m: m, test/only: m } }\n  - { name: hi, base_url: "${hi.baseUrl}", models: { test/m: m } }\n`, 'provider-402');
    try {
      const ask = (model: string) => fetch(`${gateway.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gateway.gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) });
      const next = await ask('test/m');
      // Before: the provider's 402 relayed as the caller's, "upstream says 402", though another provider could answer.
      expect(next.status).toBe(200);
      expect(((await next.json()) as any).provider).toBe('hi');
      const alone = await ask('test/only');
      expect(alone.status).toBe(502);
      expect(((await alone.json()) as any).error.message).toMatch(/^All providers for the requested models are unavailable: spent: HTTP 402 .*upstream says 402/);
    } finally {
      await gateway.close();
      await spent.close();
      await hi.close();
    }
  });
});

