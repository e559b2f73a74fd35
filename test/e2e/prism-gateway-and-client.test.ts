/** Over Prism serving the official OpenAPI: router serve as a gateway in front of it, and the library client on every route the OpenAPI has. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { RouterClient } from '../../src/client/index.js';
import { prismApiForFile } from '../support/prism-api.js';

// router against a service we did not write: Stoplight Prism serving the official OpenAPI of the
// deployed service, which answers each route with the OpenAPI's own example and refuses (422) a
// request the OpenAPI does not allow. Prism serves the paths at its root; the small proxy here puts
// them under /api/v1, where the deployed service has them.
const prismApi = prismApiForFile();
let env: Record<string, string>;
let home: string;
let prismPort: number;
beforeAll(() => ({ env, home, prismPort } = prismApi));

describe('router serve as a gateway over Prism (an upstream we did not write)', () => {
  let gateway: Emulator;
  beforeAll(async () => {
    const config = parseProviders(`providers:\n  - { name: prism, base_url: "http://127.0.0.1:${prismPort}", api_key_env: PRISM_KEY, models: { test/gpt4: openai/gpt-4 }, prices: { test/gpt4: { prompt: 0.001, completion: 0.002 } } }\n`, { PRISM_KEY: 'sk-upstream-prism' });
    gateway = await startEmulator({ stateDir: join(home, 'gateway'), port: 0, gateway: { config } });
  });
  afterAll(() => gateway?.close());

  it('a chat through the gateway is answered by the upstream and charged at the configured prices', async () => {
    const { apiKey } = gateway.store.firstKeys();
    const ws = gateway.store.findKey(apiKey)!.workspace;
    const before = gateway.store.balance(ws);
    const r = await runCli(['chat', '--no-stream', '--model', 'test/gpt4', 'hi'], { env: { ...env, ROUTER_API_ROOT: gateway.apiRoot, ROUTER_API_KEY: apiKey } });
    expect(r.stdout, r.stderr).toBe('The capital of France is Paris.\n');
    expect(r.code).toBe(0);
    // The OpenAPI example's usage: 25 prompt and 10 completion tokens.
    expect(before - gateway.store.balance(ws)).toBeCloseTo(25 * 0.001 + 10 * 0.002, 6);
  });
});


describe('the library client (src/client) against Prism: every route the OpenAPI has and the client asks', () => {
  const HASH = 'f01d52606dc8f0a8303a7b5cc3fa07109c2e346cec7c0a16b40de462992ce943';
  const GEN = 'gen-3bhGkxlo4XFrqiabUM7NDtwDzWwG';
  let c: RouterClient;
  let m: RouterClient;
  beforeAll(() => {
    c = new RouterClient({ apiRoot: env.ROUTER_API_ROOT!, apiKey: 'sk-prism-test-0123456789', maxRetries: 0 });
    m = new RouterClient({ apiRoot: env.ROUTER_API_ROOT!, apiKey: 'sk-prism-management-0123456789', maxRetries: 0 });
  });
  afterAll(async () => {
    await c?.close();
    await m?.close();
  });
  const ask = [{ role: 'user' as const, content: 'hi' }];
  // Each call the client makes of a route the OpenAPI describes; the answer read as the client reads it.
  const calls = (): [string, () => Promise<unknown>][] => [
    ['chat.create', async () => (await c.chat.create({ model: 'openai/gpt-4', messages: ask })).choices.length],
    ['chat.create with tools', async () => (await c.chat.create({ model: 'openai/gpt-4', messages: ask, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] })).choices.length],
    ['embeddings.create', async () => (await c.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'hi' })).data.length],
    ['speech.create', async () => {
      const s = await c.speech.create({ model: 'openai/gpt-4o-mini-tts', voice: 'alloy', input: 'hi' });
      let n = 0;
      for await (const b of s.chunks) n += b.length;
      return n;
    }],
    ['key.get', async () => typeof (await c.key.get()).limit_remaining],
    ['keys.list', async () => (await m.keys.list({ includeDisabled: true })).length],
    ['keys.create', async () => (await m.keys.create({ name: 'x', limit: 5 })).key.length],
    ['keys.get', async () => (await m.keys.get(HASH)).hash.length],
    ['keys.update', async () => (await m.keys.update(HASH, { name: 'y' })).hash.length],
    ['keys.delete', () => m.keys.delete(HASH)],
    ['keys.current', async () => typeof (await m.keys.current()).is_management_key],
    ['activity.list', async () => (await m.activity.list()).length],
    ['credits.get', async () => typeof (await m.credits.get()).total_credits],
    ['generations.get', async () => typeof (await c.generations.get(GEN)).total_cost],
    ['generations.content', async () => typeof (await c.generations.content(GEN)).input],
    ['generations.feedback', () => m.generations.feedback({ generation_id: GEN, category: 'latency', comment: 'slow' })],
  ];

  it("parses each route's example answer (and Responses' and the model list's)", async () => {
    const failed: string[] = [];
    const all: [string, () => Promise<unknown>][] = [...calls(), ['responses.create', async () => (await c.responses.create({ model: 'openai/gpt-4', input: 'hi' })).status], ['models.list', async () => (await c.models.list()).length]];
    for (const [name, call] of all) await call().catch((e: unknown) => failed.push(`${name}: ${String(e)}`));
    expect(failed).toEqual([]);
  });

  it('parses answers Prism makes up from the schemas, five rounds', async () => {
    // Responses left out: Prism's faker itself fails on its schema now and then (a 500 from Prism), and the model
    // list's made-up links.next is a random word the client follows as a path (a 404).
    const failed: string[] = [];
    prismApi.preferDynamic = true;
    try {
      for (let round = 0; round < 5; round++) for (const [name, call] of calls()) await call().catch((e: unknown) => failed.push(`${name}: ${String(e)}`));
      // Made up indeed: not the example's 100.5.
      expect((await m.credits.get()).total_credits).not.toBe(100.5);
    } finally {
      prismApi.preferDynamic = false;
    }
    expect(failed).toEqual([]);
  });

  it("the OpenAPI's error answers are the client's typed errors by status", async () => {
    const { APIError } = await import('../../src/client/index.js');
    const seen: string[] = [];
    try {
      for (const code of [400, 401, 402, 403, 404, 429, 500, 502, 503]) {
        prismApi.preferCode = code;
        const err = await c.chat.create({ model: 'openai/gpt-4', messages: ask }).then(() => undefined, (e: unknown) => e);
        seen.push(`${code} ${err instanceof APIError ? `${err.constructor.name} ${err.status}` : String(err)}`);
      }
    } finally {
      prismApi.preferCode = undefined;
    }
    expect(seen).toEqual(['400 BadRequestError 400', '401 AuthenticationError 401', '402 PaymentRequiredError 402', '403 PermissionDeniedError 403', '404 NotFoundError 404', '429 RateLimitError 429', '500 InternalServerError 500', '502 InternalServerError 502', '503 InternalServerError 503']);
  });
});
