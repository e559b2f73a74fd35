import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersHi, localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';

// A `provider` member the OpenAPI's ProviderPreferences does not name (it takes no other: additionalProperties
// false) is a 400 naming it, from the fake models and the gateway alike. Before, `provider.ordr` (a typo of
// order) was ignored in silence and the first provider answered.
let up: LocalUpstream;
let gw: Awaited<ReturnType<typeof testGateway>>;

beforeAll(async () => {
  up = await localUpstream(answersHi);
  gw = await testGateway(`providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { test/m: m } }\n  - { name: up2, base_url: "${up.baseUrl}", models: { test/m: m } }\n`, 'provider-member');
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function chat(body: Record<string, unknown>) {
  const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }) });
  return { status: res.status, body: (await res.json()) as any };
}

describe('a provider member the OpenAPI does not name', () => {
  it.each(['test/m', 'local/echo'])('%s: a typo is a 400 naming the member meant, nothing asked', async (model) => {
    const before = up.seen.length;
    const typo = await chat({ model, provider: { ordr: ['up2'] } });
    expect([typo.status, typo.body.error.message]).toEqual([400, 'provider.ordr is not a provider preference (did you mean order?)']);
    const other = await chat({ model, provider: { colour: 'blue' } });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toMatch(/^provider\.colour is not a provider preference \(known: allow_fallbacks, .*, zdr\)$/);
    expect(up.seen.length).toBe(before);
  });

  it('every member the OpenAPI names, null, is taken', async () => {
    const all = ['allow_fallbacks', 'data_collection', 'enforce_distillable_text', 'ignore', 'max_price', 'only', 'order', 'preferred_max_latency', 'preferred_min_throughput', 'quantizations', 'require_parameters', 'sort', 'zdr'];
    const got = await chat({ model: 'test/m', provider: Object.fromEntries(all.map((k) => [k, null])) });
    expect(got.status).toBe(200);
  });
});
