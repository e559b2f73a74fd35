import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIError, RouterClient } from '../../src/client/index.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { deadPort, localUpstream, webServer } from '../support/upstreams.js';
import { runCliInProcess } from '../support/cli-env.js';

// A gateway asks every provider before it answers a 502: a client that retried that 502 twice sent each
// provider the request three times. When each failure would come again (a refusal of the request or its key,
// a host that is not there) the 502 says `x-should-retry: false`, the header openai-node reads; our client
// reads it too, both ways. A 503 of a provider (down for a moment) leaves the choice to the client, as before.
let chain: GatewayChain;
const asked = { refusing: 0, down: 0 };
let env: Record<string, string>;
let own: { close(): Promise<void> } | undefined;

beforeAll(async () => {
  const dead = await deadPort();
  const refusing = await localUpstream((_req, res) => {
    asked.refusing++;
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'no such key' } }));
  });
  const down = await localUpstream((_req, res) => {
    asked.down++;
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'down for a moment' } }));
  });
  chain = await startGatewayChain('gateway-should-retry', () => `
providers:
  - { name: dead, base_url: "http://127.0.0.1:${dead}/v1", models: { test/lasting: m } }
  - { name: refusing, base_url: "${refusing.baseUrl}", models: { test/lasting: m } }
  - { name: down, base_url: "${down.baseUrl}", models: { test/passing: m } }
`, { locals: [refusing, down] });
  env = { ROUTER_API_ROOT: chain.gateway.apiRoot, ROUTER_API_KEY: chain.key, ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '', ROUTER_CONFIG_DIR: join(chain.dir, 'config'), ROUTER_STATE_DIR: join(chain.dir, 'state') };
});

afterAll(async () => {
  await own?.close();
  await chain?.close();
});

const ask = (model: string) => fetch(`${chain.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${chain.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) });
const reset = () => Object.assign(asked, { refusing: 0, down: 0 });

describe('a 502 after every provider was asked', () => {
  it('says x-should-retry: false when each failure would come again, nothing when one may pass', async () => {
    const lasting = await ask('test/lasting');
    expect([lasting.status, lasting.headers.get('x-should-retry')]).toEqual([502, 'false']);
    const passing = await ask('test/passing');
    expect([passing.status, passing.headers.get('x-should-retry')]).toEqual([502, null]);
  });

  it('is not asked again by the openai package, nor by our client, nor by the CLI (default retries)', async () => {
    reset();
    const sdk = new OpenAI({ apiKey: chain.key, baseURL: `${chain.gateway.apiRoot}/v1`, maxRetries: 2 });
    const err = await sdk.chat.completions.create({ model: 'test/lasting', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(asked.refusing).toBe(1);

    reset();
    const client = new RouterClient({ apiKey: chain.key, apiRoot: chain.gateway.apiRoot, maxRetries: 2 });
    const ours = await client.chat.create({ model: 'test/lasting', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    await client.close();
    expect([(ours as APIError).status, (ours as APIError).retries]).toEqual([502, undefined]);
    expect(asked.refusing).toBe(1);

    reset();
    const r = await runCliInProcess(['chat', 'hi', '-m', 'test/lasting'], { env });
    expect(r.code, r.stderr).toBe(7);
    expect(r.stderr).not.toMatch(/retry/i);
    expect(asked.refusing).toBe(1);
  });

  it('one whose provider answered 503 is still asked again (it may be back)', async () => {
    reset();
    const sdk = new OpenAI({ apiKey: chain.key, baseURL: `${chain.gateway.apiRoot}/v1`, maxRetries: 1 });
    await sdk.chat.completions.create({ model: 'test/passing', messages: [{ role: 'user', content: 'hi' }] }).catch(() => {});
    expect(asked.down).toBe(2);
    reset();
    const client = new RouterClient({ apiKey: chain.key, apiRoot: chain.gateway.apiRoot, maxRetries: 1 });
    await client.chat.create({ model: 'test/passing', messages: [{ role: 'user', content: 'hi' }] }).catch(() => {});
    await client.close();
    expect(asked.down).toBe(2);
  });
});

describe('our client reads x-should-retry from any server', () => {
  it('asks again on `true` with a status it would not retry, and not on `false` with one it would', async () => {
    let n = 0;
    const server = await webServer((req, res) => {
      req.resume();
      n++;
      const word = req.url?.includes('/models') ? 'true' : 'false';
      if (word === 'true' && n >= 2) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [] }));
        return;
      }
      res.writeHead(word === 'true' ? 409 : 503, { 'content-type': 'application/json', 'x-should-retry': word });
      res.end(JSON.stringify({ error: { message: 'try it or not' } }));
    });
    own = server;
    const client = new RouterClient({ apiKey: 'sk-test', apiRoot: server.root, maxRetries: 2 });
    const listed = await client.models.list();
    expect([n, listed]).toEqual([2, []]);
    n = 0;
    const err = await client.credits.get().catch((e: unknown) => e);
    await client.close();
    expect([(err as APIError).status, n]).toEqual([503, 1]);
  });
});
