import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { FLAVORS, startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startedForAll } from '../support/for-all.js';
import { gatewayForAll } from '../support/gateway-for-all.js';

// A batch's requests took no `provider=` fault: a batch created with `x-router-fault: 503,provider=local-alpha` was
// answered by local-alpha, where a call alone carrying it falls back to local-beta (and a 400 one is the caller's).
// Now the fault of the create request is kept with the batch and each of its requests meets it as a call alone does:
// the fake models in both flavours, and a gateway over upstreams `alpha` and `beta`.
const messages = [{ role: 'user', content: 'hi' }];

function answer(res: ServerResponse) {
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage }));
}

const up = gatewayForAll({
  prefix: 'router-batch-provider-fault-',
  upstreams: { alpha: (_req, res) => answer(res), beta: (_req, res) => answer(res) },
  providers: (urls) => `local_models: false
providers:
  - { name: alpha, base_url: "${urls.alpha}", models: { local/echo: m } }
  - { name: beta, base_url: "${urls.beta}", models: { local/echo: m } }
`,
  gateway: { batchDelayMs: 0 },
});
const fakes = FLAVORS.map((flavor) => [flavor, startedForAll(() => startEmulator({ stateDir: join(up.dir, flavor), port: 0, flavor, batchDelayMs: 0 }))] as const);

interface Item {
  response: { status_code: number; body: { provider?: string } } | null;
  error: { type: string; message: string } | null;
}

/** A batch of two requests created with the fault in its header, once settled: each result as `200 provider` or its error's type and words. */
async function settledBatch(e: Emulator, flavor: string, endpoint: string, model: string, body: Record<string, unknown>, fault: string): Promise<string[]> {
  const path = `${e.apiRoot}${flavor === 'deployed' ? '/beta/batches' : '/v1/batches'}`;
  const headers = { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' };
  const requests = ['a', 'b'].map((custom_id) => ({ custom_id, body }));
  const made = await fetch(path, { method: 'POST', headers: { ...headers, 'x-router-fault': fault }, body: JSON.stringify({ endpoint, model, requests }) });
  expect(made.status, await made.clone().text()).toBe(202);
  const { id } = (await made.json()) as { id: string };
  let batch: { status: string; results?: Item[] | null } = { status: 'validating' };
  const ended = async () => (batch = (await (await fetch(`${path}/${id}`, { headers })).json()) as typeof batch);
  // Polled until it ended (a state, not a time: the test's bound ends a wait for one that never comes).
  while (!['completed', 'failed'].includes((await ended()).status)) await new Promise((r) => setTimeout(r, 10));
  expect(batch.status).toBe('completed');
  return batch.results!.map((r) => (r.error ? `${r.error.type} ${r.error.message}` : `${r.response!.status_code} ${r.response!.body.provider}`));
}

describe.each(fakes)('a batch created with a provider= fault, the fake models (%s)', (flavor, e) => {
  it('each request falls back past the provider the fault names, as a call alone', async () => {
    expect(await settledBatch(e, flavor, '/v1/chat/completions', 'local/echo', { messages }, '503,provider=local-alpha')).toEqual(['200 local-beta', '200 local-beta']);
  });

  it('a 400 is each request\'s own failure, no other provider asked', async () => {
    const words = 'invalid_request_error local-alpha: Injected fault: HTTP 400';
    expect(await settledBatch(e, flavor, '/v1/chat/completions', 'local/echo', { messages }, '400,provider=local-alpha')).toEqual([words, words]);
  });

  it('embeddings of a model with that one provider fail, as a call alone', async () => {
    const results = await settledBatch(e, flavor, '/v1/embeddings', 'local/embed', { input: 'hi' }, '503,provider=local-alpha');
    expect(results).toHaveLength(2);
    for (const r of results) expect(r).toMatch(/^api_error .*local-alpha: Injected fault: HTTP 503/);
  });

  it('a fault that names another provider changes nothing', async () => {
    expect(await settledBatch(e, flavor, '/v1/chat/completions', 'local/echo', { messages }, '503,provider=local-gamma')).toEqual(['200 local-alpha', '200 local-alpha']);
  });
});

describe('a batch created with a provider= fault, the gateway over local upstreams', () => {
  it('each request falls back to beta; alpha is never asked', async () => {
    const asked = up.upstream('alpha').seen.length;
    expect(await settledBatch(up.gateway, 'spec', '/v1/chat/completions', 'local/echo', { messages }, '503,provider=alpha')).toEqual(['200 beta', '200 beta']);
    expect(up.upstream('alpha').seen.length).toBe(asked);
  });

  it('a 400 is each request\'s own failure, no upstream asked', async () => {
    const asked = [up.upstream('alpha').seen.length, up.upstream('beta').seen.length];
    const words = 'invalid_request_error alpha: Injected fault: HTTP 400';
    expect(await settledBatch(up.gateway, 'spec', '/v1/chat/completions', 'local/echo', { messages }, '400,provider=alpha')).toEqual([words, words]);
    expect([up.upstream('alpha').seen.length, up.upstream('beta').seen.length]).toEqual(asked);
  });
});
