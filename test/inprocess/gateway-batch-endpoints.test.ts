import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { failing, type LocalUpstream } from '../support/upstreams.js';
import { waitBound } from '../support/until.js';

// Embeddings and Responses batches whose model lives on an upstream: run there, request by request,
// past a failing provider, each answer as the upstream gave it under the gateway's model id.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let five: LocalUpstream;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-batch-endpoints-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  five = await failing(503);
  const yaml = `
batch_concurrency: 2
providers:
  - { name: five, base_url: "${five.baseUrl}", responses: true, models: { test/resp: local/echo }, embedding_models: { test/embed: local/embed } }
  - name: up
    base_url: ${upstream.apiRoot}/v1
    api_key_env: UP_KEY
    responses: true
    models: { test/resp: local/echo }
    embedding_models: { test/embed: local/embed }
    prices: { test/resp: { prompt: 0.001, completion: 0.002 }, test/embed: { prompt: 0.0001 } }
`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, batchDelayMs: 0, gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await five?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(e: Emulator, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${e.apiRoot}${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return res.json();
}

async function runBatch(endpoint: string, model: string, bodies: Record<string, unknown>[]) {
  const created = await call(gateway, '/v1/batches', { endpoint, model, completion_window: '24h', requests: bodies.map((body, i) => ({ custom_id: `r${i}`, body })) });
  expect(created.id, JSON.stringify(created)).toMatch(/^batch_/);
  // Until it ends: 400 looks (10 s) can be too few on a loaded machine; the bound ends only a batch that never does.
  for (const end = Date.now() + waitBound(); Date.now() < end; ) {
    const seen = await call(gateway, `/v1/batches/${created.id}`);
    if (seen.status === 'completed' || seen.status === 'failed') return seen;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the batch did not end');
}

const byId = (results: any[]) => Object.fromEntries(results.map((r) => [r.custom_id, r.response.body]));

describe('batches over providers beyond chat', () => {
  it('runs an embeddings batch on the upstream: its vectors, under the gateway model, priced', async () => {
    const inputs = ['one vector', 'another vector', 'a third'];
    const seen = await runBatch('/v1/embeddings', 'test/embed', inputs.map((input) => ({ input })));
    expect(seen.status).toBe('completed');
    expect(seen.request_counts).toMatchObject({ total: 3, completed: 3, failed: 0 });
    const got = byId(seen.results);
    for (const [i, input] of inputs.entries()) {
      const direct = await call(upstream, '/v1/embeddings', { model: 'local/embed', input });
      expect(got[`r${i}`].data).toEqual(direct.data);
      expect([got[`r${i}`].model, got[`r${i}`].provider]).toEqual(['test/embed', 'up']);
      // At the batch price (half): a result's usage.cost is what it is charged.
      expect(got[`r${i}`].usage.cost).toBeCloseTo(direct.usage.prompt_tokens * 0.0001 * 0.5, 10);
    }
    expect(seen.usage.prompt_tokens).toBe(Object.values(got).reduce((n: number, b: any) => n + b.usage.prompt_tokens, 0));
  });

  it('runs a Responses batch on the upstream: its answers, under the gateway model, priced', async () => {
    const inputs = ['first question', 'second question'];
    const seen = await runBatch('/v1/responses', 'test/resp', inputs.map((input) => ({ input })));
    expect(seen.status).toBe('completed');
    expect(seen.request_counts).toMatchObject({ total: 2, completed: 2, failed: 0 });
    const got = byId(seen.results);
    for (const [i, input] of inputs.entries()) {
      const direct = await call(upstream, '/v1/responses', { model: 'local/echo', input });
      expect(got[`r${i}`].output).toEqual(direct.output.map((o: any) => ({ ...o, id: expect.any(String) })));
      expect(got[`r${i}`].model).toBe('test/resp');
      const u = got[`r${i}`].usage;
      expect(u.cost).toBeCloseTo((u.input_tokens * 0.001 + u.output_tokens * 0.002) * 0.5, 10);
    }
  });

  it('still runs embeddings batches for the fake models there', async () => {
    const seen = await runBatch('/v1/embeddings', 'local/embed', [{ input: 'fake' }]);
    expect(seen.request_counts).toMatchObject({ total: 1, completed: 1 });
    expect(byId(seen.results).r0.model).toBe('local/embed');
  });
});
