import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// A batch's charge counts on the key that created it, as its requests one by one would: a key with a
// limit could spend the workspace's credits past that limit through batches (they counted on the
// workspace only), and its usage did not show them. Both kinds: a fake model's batch, charged at its
// end, and one over an upstream, each request charged as it is answered.
const PRICE = 0.001;
let dir: string;
let gateway: Emulator;
let upstream: LocalUpstream;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-batch-key-usage-'));
  upstream = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }));
  });
  const config = parseProviders(`providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/m: m }, prices: { test/m: { prompt: ${PRICE}, completion: ${PRICE} } } }\n`, {});
  gateway = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0, gateway: { config } });
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

it.each([['a fake model', 'local/echo'], ['an upstream model', 'test/m']])("%s's batch counts on the key that created it", async (_kind, model) => {
  const { managementKey } = gateway.store.firstKeys();
  const made = await call('POST', '/v1/keys', managementKey, { name: `batches ${model}`, limit: 1 });
  const requests = [1, 2, 3].map((i) => ({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `hello ${i}` }] } }));
  const created = await call('POST', '/v1/batches', made.body.key, { endpoint: '/v1/chat/completions', model, completion_window: '24h', requests });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  // The batch's end, and its charge (made when it ends, or at the get that finds it ended).
  const done = await vi.waitFor(async () => {
    const got = await call('GET', `/v1/batches/${created.body.id}`, made.body.key);
    expect(got.body.status).toBe('completed');
    return got.body;
  }, SETTLE);
  const cost = done.usage.cost as number;
  expect(cost).toBeGreaterThan(0);
  await vi.waitFor(async () => expect((await call('GET', '/v1/key', made.body.key)).body.data.usage).toBeCloseTo(cost, 10), SETTLE);
  expect((await call('GET', '/v1/key', made.body.key)).body.data.limit_remaining).toBeCloseTo(1 - cost, 10);
});
