import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { call, emulatorFolder, runBatch } from '../support/emulator-folder.js';

// A batch result's body carries the id of its generation (`gen-batch-…` for chat, as the deployed
// service's), and the service keeps a batch's generations (they are "not grouped by session_id"):
// `GET /v1/generation?id=` was a 404 for every one. Each answered request is kept, at the batch price,
// on the `batch` tier (the provider-reported tier of the yaml's AnthropicServiceTier; was null).
const folder = emulatorFolder('router-batch-generations-');
const emulator = folder.start;

describe.each(['spec', 'deployed'] as const)('a batch result’s generation (%s)', (flavor) => {
  it('answers at /v1/generation by the id its body carries: model, provider, tokens, the batch price; another workspace’s is a 404', async () => {
    const e = await emulator(flavor, { flavor });
    const seen = await runBatch(e, flavor, '/v1/chat/completions', 'local/echo', [{ messages: [{ role: 'user', content: 'one' }] }, { messages: [{ role: 'user', content: 'two words' }] }]);
    for (const result of seen.results) {
      const body = result.response.body;
      expect(body.id).toMatch(/^gen-batch-/);
      const got = await call(e, `/v1/generation?id=${body.id}`);
      // Before: 404 "Generation gen-batch-… not found".
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body.data).toMatchObject({ id: body.id, model: 'local/echo', provider_name: body.provider, api_type: 'completions', streamed: false, cancelled: false, finish_reason: body.choices[0].finish_reason, tokens_prompt: body.usage.prompt_tokens, tokens_completion: body.usage.completion_tokens, session_id: null, request_id: result.response.request_id, service_tier: 'batch' });
      // The result's usage.cost is what it is charged, at the batch price (the service's usage.cost is
      // "the amount charged"): half the list price; the generation and the batch's usage say the same.
      // Before: the result said the full price, its generation and the batch's usage half of it.
      const list = body.usage.prompt_tokens * 1e-6 + body.usage.completion_tokens * 2e-6;
      expect(body.usage.cost).toBeCloseTo(list / 2, 10);
      expect(body.usage.cost_details.upstream_inference_prompt_cost + body.usage.cost_details.upstream_inference_completions_cost).toBeCloseTo(body.usage.cost, 10);
      expect(got.body.data.total_cost).toBeCloseTo(body.usage.cost, 10);
    }
    expect(seen.results.reduce((n: number, r: any) => n + r.response.body.usage.cost, 0)).toBeCloseTo(seen.usage.cost, 10);
    // A Responses or messages answer names no provider in its body: its generation still names the one that served it.
    for (const [endpoint, body] of [['/v1/responses', { input: 'three' }], ['/v1/messages', { max_tokens: 16, messages: [{ role: 'user', content: 'four' }] }]] as const) {
      const other = await runBatch(e, flavor, endpoint, 'local/echo', [body]);
      const kept = (await call(e, `/v1/generation?id=${other.results[0].response.body.id}`)).body.data;
      expect(kept.provider_name, endpoint).toMatch(/^local-/);
      expect(kept.service_tier, endpoint).toBe('batch');
      if (endpoint === '/v1/messages') expect(other.results[0].response.body.usage.service_tier).toBe('batch');
    }
    const other = e.store.createWorkspace('other', 1);
    expect((await call(e, `/v1/generation?id=${seen.results[0].response.body.id}`, undefined, other.apiKey)).status).toBe(404);
  });

  it('says the batch tier of a fake model’s request that asked for another: its answer only says back the ask', async () => {
    const e = await emulator(`${flavor}-asked-tier`, { flavor });
    const seen = await runBatch(e, flavor, '/v1/chat/completions', 'local/echo', [{ service_tier: 'priority', messages: [{ role: 'user', content: 'fast please' }] }]);
    const body = seen.results[0].response.body;
    const kept = (await call(e, `/v1/generation?id=${body.id}`)).body.data;
    // Before: "priority", for a request charged at the batch's half price.
    expect(kept.service_tier).toBe('batch');
    // Charged at the batch price, which the result’s usage.cost carries too.
    expect(kept.total_cost).toBeCloseTo(body.usage.cost, 10);
  });
});

it('a batch over a provider (another router serve): each answer’s generation at the gateway, named by the provider', async () => {
  const upstream = await emulator('upstream');
  const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/echo }, prices: { test/m: { prompt: 0.001, completion: 0.002 } } }\n`;
  const gateway = await emulator('gateway', { gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
  const seen = await runBatch(gateway, 'spec', '/v1/chat/completions', 'test/m', [{ messages: [{ role: 'user', content: 'hello there' }] }]);
  const body = seen.results[0].response.body;
  // Under an id of the batch's own, as a fake model's batch answer (before: the upstream's `gen-…`).
  expect(body.id).toMatch(/^gen-batch-/);
  const got = await call(gateway, `/v1/generation?id=${body.id}`);
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  // The upstream's id is its `upstream_id`: the upstream's own generation.
  expect(got.body.data.upstream_id).not.toBe(body.id);
  expect((await call(upstream, `/v1/generation?id=${got.body.data.upstream_id}`)).body.data).toMatchObject({ model: 'local/echo', tokens_prompt: body.usage.prompt_tokens });
  expect(got.body.data).toMatchObject({ id: body.id, model: 'test/m', provider_name: 'up', api_type: 'completions', tokens_prompt: body.usage.prompt_tokens, tokens_completion: body.usage.completion_tokens, service_tier: 'batch' });
  expect(got.body.data.total_cost).toBeCloseTo(seen.usage.cost, 10);
});

it('a Responses batch over a provider: each answer’s generation names the provider that answered', async () => {
  const upstream = await emulator('upstream-responses');
  const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, responses: true, models: { test/m: local/echo } }\n`;
  const gateway = await emulator('gateway-responses', { gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
  const seen = await runBatch(gateway, 'spec', '/v1/responses', 'test/m', [{ input: 'hello there' }]);
  const body = seen.results[0].response.body;
  const got = await call(gateway, `/v1/generation?id=${body.id}`);
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  // Before: provider_name "" (the body names none).
  expect(got.body.data).toMatchObject({ id: body.id, model: 'test/m', provider_name: 'up' });
});

it('a fake-model batch awaiting payment (Get answers 402) is not in /v1/activity or the analytics query until it is paid, across a restart', async () => {
  const e = await emulator('unpaid');
  const poor = e.store.createWorkspace('poor', 1e-9);
  const activity = async (on: Emulator) => (await call(on, '/v1/activity', undefined, poor.managementKey)).body.data as { requests: number; usage: number }[];
  const analytics = async (on: Emulator) => (await call(on, '/v1/analytics/query', { metrics: ['request_count', 'usage'] }, poor.managementKey)).body.data.data as { request_count: number; usage: number }[];
  const path = '/v1/batches';
  const created = await call(e, path, { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests: [{ custom_id: 'r0', body: { messages: [{ role: 'user', content: 'a few words to pay for' }] } }] }, poor.apiKey);
  let got = await call(e, `${path}/${created.body.id}`, undefined, poor.apiKey);
  while (got.status !== 402) {
    expect(got.body.status).not.toBe('failed');
    await new Promise((r) => setTimeout(r, 20));
    got = await call(e, `${path}/${created.body.id}`, undefined, poor.apiKey);
  }
  e.store.advanceClock(86_400_000);
  // Before: one request at the batch's cost, though nothing was charged.
  expect(await activity(e)).toEqual([]);
  // The analytics query sums the same (before this: the request at its cost, as activity did).
  expect(await analytics(e)).toEqual([]);
  await folder.stop(e);
  const again = await emulator('unpaid');
  expect(await activity(again)).toEqual([]);
  again.store.topUp('poor', 1);
  const paid = await call(again, `${path}/${created.body.id}`, undefined, poor.apiKey);
  expect(paid.status).toBe(200);
  const rows = await activity(again);
  expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(1);
  expect(await analytics(again)).toEqual([{ request_count: 1, usage: expect.closeTo(paid.body.usage.cost, 10) }]);
  expect(rows.reduce((n, r) => n + r.usage, 0)).toBeCloseTo(paid.body.usage.cost, 10);
});
