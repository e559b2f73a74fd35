import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A key's limit counts what a gateway request cost when nothing bounded it before the answer (no
// max_tokens): charged after the answer, up to the balance, and counted to the key as a bounded one is.
const PRICE = 0.001;
let dir: string;
let gateway: Emulator;
let upstream: LocalUpstream;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-key-limit-'));
  upstream = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }));
  });
  const config = parseProviders(`providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/m: m }, prices: { test/m: { prompt: ${PRICE}, completion: ${PRICE} } } }\n`, {});
  gateway = await startEmulator({ stateDir: join(dir, 'state'), port: 0, gateway: { config } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (method: string, path: string, key: string, body?: unknown) => {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};

it('an unbounded gateway request counts toward the key that made it, and its limit then refuses', async () => {
  const { managementKey } = gateway.store.firstKeys();
  const made = await call('POST', '/v1/keys', managementKey, { name: 'capped', limit: 0.005 });
  expect(made.status).toBe(201);
  const ask = () => call('POST', '/v1/chat/completions', made.body.key, { model: 'test/m', messages: [{ role: 'user', content: 'hi' }] });
  expect((await ask()).status).toBe(200);
  const after = (await call('GET', '/v1/key', made.body.key)).body.data;
  expect(after.usage).toBeCloseTo(5 * PRICE, 10);
  expect(after.limit_remaining).toBeCloseTo(0, 10);
  expect((await ask()).status).toBe(403);
});
