import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runBatch } from '../support/emulator-folder.js';

// Gateway routing edges. A price sort ranked a fake model (priced at its listed price) as a provider with no
// price, after every priced upstream. A provider a rule passed over (never asked), like an id that names no
// model, counted as an attempt in router_metadata and openrouter_metadata. And a batch's requests under
// `provider.require_parameters` had no test of their own. Two other `router serve`s are the upstreams.
let dir: string;
let alpha: Emulator;
let beta: Emulator;
let gateway: Emulator;
let key: string;

const TOOLS = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
const HI = [{ role: 'user', content: 'hello there' }];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gw-edges-'));
  alpha = await startEmulator({ stateDir: join(dir, 'alpha'), port: 0 });
  beta = await startEmulator({ stateDir: join(dir, 'beta'), port: 0 });
  // test/u: two providers without prices (u1 first, u2 third in the file) around two priced ones.
  // test/r: `down` answers nothing, `notools` lacks tools, `beta` takes them.
  const yaml = `
providers:
  - name: u1
    base_url: ${alpha.apiRoot}/v1
    api_key_env: A_KEY
    models: { test/u: local/echo }
  - name: dear
    base_url: ${beta.apiRoot}/v1
    api_key_env: B_KEY
    models: { test/u: local/echo }
    prices: { test/u: { prompt: 0.000003, completion: 0.000004 } }
  - name: u2
    base_url: ${beta.apiRoot}/v1
    api_key_env: B_KEY
    models: { test/u: local/echo }
  - name: cheap
    base_url: ${alpha.apiRoot}/v1
    api_key_env: A_KEY
    models: { test/u: local/echo }
    prices: { test/u: { prompt: 0.000001, completion: 0.000002 } }
  - name: down
    base_url: http://127.0.0.1:9/v1
    api_key_env: A_KEY
    models: { test/r: local/echo }
  - name: notools
    base_url: ${alpha.apiRoot}/v1
    api_key_env: A_KEY
    models: { test/r: local/echo }
    supported_parameters: { test/r: [temperature, max_tokens] }
  - name: beta
    base_url: ${beta.apiRoot}/v1
    api_key_env: B_KEY
    models: { test/r: local/echo }
`;
  const config = parseProviders(yaml, { A_KEY: alpha.store.firstKeys().apiKey, B_KEY: beta.store.firstKeys().apiKey });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config }, batchDelayMs: 0 });
  key = gateway.store.firstKeys().apiKey;
});
afterAll(async () => {
  await gateway?.close();
  await alpha?.close();
  await beta?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function chat(body: Record<string, unknown>, metadata = 'x-router-metadata'): Promise<{ status: number; json: any }> {
  const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', [metadata]: 'enabled' }, body: JSON.stringify({ messages: HI, ...body }) });
  return { status: res.status, json: await res.json() };
}
const available = (r: { json: any }) => r.json.router_metadata.endpoints.available.map((e: { provider: string; model: string }) => `${e.model}@${e.provider}`);

describe('provider.sort by price', () => {
  it('puts priced providers cheapest first, then those without prices in the file order', async () => {
    for (const sort of ['price', { by: 'price' }]) {
      const r = await chat({ model: 'test/u', provider: { sort } });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(available(r)).toEqual(['test/u@cheap', 'test/u@dear', 'test/u@u1', 'test/u@u2']);
      expect(r.json.provider).toBe('cheap');
    }
    // Without a sort: the file's order.
    expect(available(await chat({ model: 'test/u' }))).toEqual(['test/u@u1', 'test/u@dear', 'test/u@u2', 'test/u@cheap']);
  });

  it('sorted together, ranks a fake model at its listed price, not as a provider without one', async () => {
    // local/lorem lists 0.5 + 1.5 USD per million tokens: cheaper than `cheap` (1 + 2); local/echo (1 + 2) ties it and comes after (test/u first in the list).
    const r = await chat({ model: 'test/u', models: ['local/echo', 'local/lorem'], provider: { sort: { by: 'price', partition: 'none' } } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(available(r)).toEqual(['local/lorem@local-alpha', 'local/lorem@local-beta', 'test/u@cheap', 'local/echo@local-alpha', 'local/echo@local-beta', 'test/u@dear', 'test/u@u1', 'test/u@u2']);
    expect(r.json.model).toBe('local/lorem');
  });
});

describe('router_metadata: providers asked apart from those passed over', () => {
  const body = { model: 'nobody/none', models: ['test/r'], tools: TOOLS, provider: { require_parameters: true } };

  it('counts only the providers asked as attempts; names those never asked in passed_over with the reason', async () => {
    const r = await chat(body);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const meta = r.json.router_metadata;
    expect(meta.attempts.map((a: any) => [a.provider, a.ok])).toEqual([['down', false], ['beta', true]]);
    expect(meta.attempt).toBe(2);
    expect(meta.passed_over).toEqual([
      { provider: 'none', model: 'nobody/none', reason: expect.stringContaining('nobody/none'), status: 400 },
      { provider: 'notools', model: 'test/r', reason: 'notools: test/r does not take tools (provider.require_parameters)', status: 404 },
    ]);
    // An endpoint of the model passed over by a rule is one of its endpoints, not available to this request.
    expect(meta.endpoints).toEqual({ available: [{ model: 'test/r', provider: 'down', selected: false }, { model: 'test/r', provider: 'beta', selected: true }], total: 3 });
    expect(meta.summary).toMatch(/test\/r via beta \(attempt 2\); failed: down \(.*\); passed over, not asked: none \(.*\), notools \(notools: test\/r does not take tools/);
  });

  it('gives the deployed shape (openrouter_metadata) the providers asked only, each with its status', async () => {
    const r = await chat(body, 'x-openrouter-metadata');
    const meta = r.json.openrouter_metadata;
    expect(meta.attempts).toEqual([{ provider: 'down', model: 'test/r', status: 502 }, { provider: 'beta', model: 'test/r', status: 200 }]);
    expect(meta.attempt).toBe(2);
    expect(meta.passed_over).toBeUndefined();
    expect(meta.endpoints.total).toBe(3);
  });

  it('a first provider answering after one passed over is attempt 1, direct', async () => {
    const r = await chat({ model: 'test/r', tools: TOOLS, provider: { require_parameters: true, ignore: ['down'] } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const meta = r.json.router_metadata;
    expect(meta).toMatchObject({ attempt: 1, strategy: 'direct', attempts: [{ provider: 'beta', model: 'test/r', ok: true }] });
    // The provider the request ignores is passed over too, first (as the request names it out before any rule).
    expect(meta.passed_over.map((p: any) => [p.provider, p.reason])).toEqual([['down', 'down: named in provider.ignore'], ['notools', expect.stringContaining('provider.require_parameters')]]);
    expect(meta.endpoints.total).toBe(3);
  });
});

describe('a batch whose requests ask provider.require_parameters', () => {
  it('routes or refuses each request as chat does: the counts and each result as the spec says', async () => {
    const ask = (extra: Record<string, unknown>) => ({ messages: HI, max_tokens: 5, ...extra });
    const bodies = [
      // Tools: notools passed over (down ignored), beta answers.
      ask({ tools: TOOLS, provider: { require_parameters: true, ignore: ['down'] } }),
      // Only temperature: notools (the first asked after `down` is ignored) takes it.
      ask({ temperature: 0.5, provider: { require_parameters: true, ignore: ['down'] } }),
      // Tools, and only notools allowed: no endpoint can handle them.
      ask({ tools: TOOLS, provider: { require_parameters: true, only: ['notools'] } }),
      // Without require_parameters, the tools go to the first provider asked.
      ask({ tools: TOOLS, provider: { ignore: ['down'] } }),
    ];
    const chats = [];
    for (const b of bodies) chats.push(await chat({ ...b, model: 'test/r' }, 'x-no-metadata'));
    expect(chats.map((c) => c.status)).toEqual([200, 200, 404, 200]);
    expect(chats.map((c) => c.json.provider)).toEqual(['beta', 'notools', undefined, 'notools']);
    const seen = await runBatch(gateway, 'spec', '/v1/chat/completions', 'test/r', bodies);
    expect(seen.request_counts).toMatchObject({ total: 4, completed: 3, failed: 1 });
    const byId = new Map(seen.results.map((r: any) => [r.custom_id, r]));
    const results = bodies.map((_, i) => byId.get(`r${i}`) as any);
    expect(results.map((r) => r.response?.status_code)).toEqual([200, 200, 404, 200]);
    expect(results.map((r) => r.response?.body?.provider)).toEqual(['beta', 'notools', undefined, 'notools']);
    expect(results[2].error.message).toBe(chats[2]!.json.error.message);
    expect(results[2].error.message).toMatch(/^No endpoints found that can handle the requested parameters: notools: test\/r does not take tools \(provider\.require_parameters\)$/);
    expect(results[2].response.body).toEqual(chats[2]!.json);
    for (const i of [0, 1, 3]) expect(results[i].error ?? null).toBeNull();
  });
});
