/** The gateway's batches at their edges, over real HTTP to an in-process `router serve`: a result's content by its id, a batch stopped by the credits, a fake model's tier, a batch saved mid-run at the list price. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { decimal } from '../../src/internal/decimal.js';
import { SETTLE } from '../support/until.js';
import { call, emulatorFolder, runBatch } from '../support/emulator-folder.js';

const folder = emulatorFolder('router-gateway-batch-edges-');
const emulator = folder.start;

describe.each(['spec', 'deployed'] as const)('a batch result’s content (%s)', (flavor) => {
  // The deployed notes: a batch's "inputs/results kept 30 days"; its generations answered
  // /v1/generation, but /v1/generation/content was a 404 "No stored content for generation gen-batch-…".
  it('answers /v1/generation/content by its gen-batch id: what was asked and answered; another workspace’s is a 404', async () => {
    const e = await emulator(`content-${flavor}`, { flavor });
    const seen = await runBatch(e, flavor, '/v1/chat/completions', 'local/echo', [{ messages: [{ role: 'user', content: 'say this back' }] }]);
    const body = seen.results[0].response.body;
    const got = await call(e, `/v1/generation/content?id=${body.id}`, undefined, e.store.firstKeys().managementKey);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.data).toEqual({ input: { messages: [{ role: 'user', content: 'say this back' }] }, output: { completion: body.choices[0].message.content, reasoning: null }, error: null });
    const other = e.store.createWorkspace('other', 1);
    expect((await call(e, `/v1/generation/content?id=${body.id}`, undefined, other.managementKey)).status).toBe(404);
    // A Responses batch's answer and a messages batch's too, by the ids their bodies carry.
    for (const [endpoint, asked] of [['/v1/responses', { input: 'three' }], ['/v1/messages', { max_tokens: 16, messages: [{ role: 'user', content: 'four' }] }]] as const) {
      const result = (await runBatch(e, flavor, endpoint, 'local/echo', [asked])).results[0].response.body;
      const content = await call(e, `/v1/generation/content?id=${result.id}`, undefined, e.store.firstKeys().managementKey);
      expect(content.status, endpoint).toBe(200);
      expect(content.body.data.output.completion, endpoint).toBe(endpoint === '/v1/responses' ? result.output_text : result.content[0].text);
    }
  });
});

describe('a batch over providers stopped by the credits', () => {
  // Before: "Insufficient credits: the batch stopped after 3 of 10 requests; …", no amounts, where every
  // other 402 (billing.ts) says what the request costs and the balance.
  it('names what its next request may cost and the balance, in the other 402s’ words', async () => {
    const PRICE = 0.001;
    const HOLD = 4 * PRICE * 0.5;
    const upstream = await emulator('batch-short-upstream');
    const yaml = `batch_concurrency: 1\nproviders:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/chat: local/lorem }, prices: { test/chat: { prompt: 0, completion: ${PRICE} } } }\n`;
    const gateway = await emulator('batch-short-gateway', { gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
    const { apiKey } = gateway.store.createWorkspace('short', 3.5 * HOLD);
    const requests = Array.from({ length: 10 }, (_, i) => ({ custom_id: `r${i}`, body: { max_tokens: 4, messages: [{ role: 'user', content: `tell me about ${i}` }] } }));
    const created = await call(gateway, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'test/chat', completion_window: '24h', requests }, apiKey);
    let seen = await call(gateway, `/v1/batches/${created.body.id}`, undefined, apiKey);
    while (!['completed', 'failed'].includes(seen.body.status)) {
      await new Promise((r) => setTimeout(r, 20));
      seen = await call(gateway, `/v1/batches/${created.body.id}`, undefined, apiKey);
    }
    expect(seen.body.status).toBe('failed');
    const balance = gateway.store.balance('short');
    expect(balance).toBeLessThan(HOLD);
    expect(seen.body.error).toEqual({
      code: 402,
      message: `Insufficient credits: the batch's next request may cost up to $${decimal(HOLD)}, the balance is $${decimal(balance)}: the batch stopped after 3 of 10 requests; the other 7 were not sent and are not charged (add credits and submit them again)`,
    });
  });
});

describe.each(['spec', 'deployed'] as const)('a fake model’s batch request that asked for a tier (%s)', (flavor) => {
  // Before: the chat result's body said "priority" (the tier asked, said back) while its generation said
  // "batch" and it was charged the batch price. A chat result's service_tier is "the service tier used by
  // the upstream provider" (ChatResult, any string): `batch`, as its generation. A Responses body's tier list
  // (ServiceTier) has no `batch`: it says none, not the tier asked.
  it('says the batch tier in its chat body as its generation does; a Responses body says none', async () => {
    const e = await emulator(`asked-tier-${flavor}`, { flavor });
    const chat = (await runBatch(e, flavor, '/v1/chat/completions', 'local/echo', [{ service_tier: 'priority', messages: [{ role: 'user', content: 'fast please' }] }])).results[0].response.body;
    expect(chat.service_tier).toBe('batch');
    expect((await call(e, `/v1/generation?id=${chat.id}`)).body.data.service_tier).toBe(chat.service_tier);
    const responses = (await runBatch(e, flavor, '/v1/responses', 'local/echo', [{ service_tier: 'priority', input: 'fast please' }])).results[0].response.body;
    expect(responses.service_tier).toBeNull();
    expect((await call(e, `/v1/generation?id=${responses.id}`)).body.data.service_tier).toBe('batch');
  });
});

describe('a batch saved mid-run by a build whose results carried the list price', () => {
  // Builds before stop 59 saved a result's usage.cost at the list price and charged half of it (its
  // generation's total_cost). Driven on after a restart by this build, those results were re-counted at
  // the list price: the batch's usage.cost (its charge) came to 1.5 times what its requests cost.
  it('counts them at the batch price after the restart: usage.cost is half the list price of every request', async () => {
    const e = await emulator('older-build', { batchDelayMs: 20 });
    const requests = Array.from({ length: 4 }, (_, i) => ({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `request number ${i} of four` }] } }));
    const created = await call(e, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests });
    const id = created.body.id as string;
    await vi.waitFor(() => expect(e.batches.store.get(id)?.request_counts.completed ?? 0).toBeGreaterThanOrEqual(2), SETTLE);
    e.batches.opts.delayMs = 600_000;
    await folder.stop(e);
    // The results as the older build wrote them: usage.cost (and cost_details) at the list price.
    const file = join(folder.dir, 'older-build', 'batches', id, 'results.jsonl');
    const saved = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(saved.length).toBeGreaterThanOrEqual(2);
    for (const item of saved) {
      const u = item.response.body.usage;
      u.cost *= 2;
      for (const k of Object.keys(u.cost_details)) if (typeof u.cost_details[k] === 'number') u.cost_details[k] *= 2;
    }
    writeFileSync(file, saved.map((item) => `${JSON.stringify(item)}\n`).join(''));
    // Its record as the older build saved it: without the mark of results at the batch price.
    const meta = join(folder.dir, 'older-build', 'batches', id, 'meta.json');
    const record = JSON.parse(readFileSync(meta, 'utf8'));
    expect(record.priced_results).toBe(true);
    delete record.priced_results;
    writeFileSync(meta, JSON.stringify(record));
    const again = await emulator('older-build');
    let seen = await call(again, `/v1/batches/${id}`);
    while (seen.body.status !== 'completed') {
      expect(seen.body.status).not.toBe('failed');
      await new Promise((r) => setTimeout(r, 20));
      seen = await call(again, `/v1/batches/${id}`);
    }
    const list = seen.body.results.reduce((n: number, r: any) => n + r.response.body.usage.prompt_tokens * 1e-6 + r.response.body.usage.completion_tokens * 2e-6, 0);
    // Before: the saved results at their list price, the others at half (1.25 to 1.5 times this).
    expect(seen.body.usage.cost).toBeCloseTo(list / 2, 10);
    // Each result says what it cost, as the batch's usage does. Before: the saved ones said their list price.
    for (const r of seen.body.results) {
      const u = r.response.body.usage;
      expect(u.cost).toBeCloseTo((u.prompt_tokens * 1e-6 + u.completion_tokens * 2e-6) / 2, 10);
      expect(u.cost_details.upstream_inference_prompt_cost + u.cost_details.upstream_inference_completions_cost).toBeCloseTo(u.cost, 10);
    }
    expect(seen.body.results.reduce((n: number, r: any) => n + r.response.body.usage.cost, 0)).toBeCloseTo(seen.body.usage.cost, 10);
    // Written once so: the file now holds them at the batch price, the record says so.
    expect(readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).response.body.usage.cost)).toEqual(seen.body.results.map((r: any) => r.response.body.usage.cost));
    expect(JSON.parse(readFileSync(meta, 'utf8')).priced_results).toBe(true);
  });
});
