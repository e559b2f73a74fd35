import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { SETTLE, waitBound } from '../support/until.js';

// A batch over an upstream holds each request's bound from the caller's credits before it sends it:
// when the credits left cannot cover the next one, nothing more goes upstream, and the batch ends
// failed with a 402's {code, message}; the answered requests are charged exactly, the rest nothing.
let dir: string;
let upstream: Emulator;
let proxy: Server;
let asked = 0;

/** Forwards to the upstream emulator over HTTP, counting the requests that reach it. */
function countingProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (req.url?.endsWith('/chat/completions')) asked++;
      const answer = await fetch(`${target}${req.url!.replace(/^\/v1/, '')}`, { method: req.method, headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' }, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-batch-credits-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  proxy = await countingProxy(`${upstream.apiRoot}/v1`);
});

afterAll(async () => {
  await upstream?.close();
  await new Promise((r) => proxy?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const PRICE = 0.001;
const MAX_TOKENS = 4;
/** One request's hold: its completion bound at the batch price (the prompt is free here). */
const HOLD = MAX_TOKENS * PRICE * 0.5;

async function gatewayWith(name: string, concurrency: number, priced = true): Promise<Emulator> {
  const yaml = `batch_concurrency: ${concurrency}
providers:
  - name: up
    base_url: http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1
    api_key_env: UP_KEY
    models: { test/chat: local/lorem }
${priced ? `    prices: { test/chat: { prompt: 0, completion: ${PRICE} } }\n` : ''}`;
  return startEmulator({ stateDir: join(dir, name), port: 0, batchDelayMs: 0, gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
}

async function call(e: Emulator, key: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${e.apiRoot}${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: await res.json() };
}

async function runBatch(e: Emulator, key: string, n: number, limit: Record<string, number> = { max_tokens: MAX_TOKENS }) {
  const requests = Array.from({ length: n }, (_, i) => ({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `tell me about ${i}` }], ...limit } }));
  const created = await call(e, key, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'test/chat', completion_window: '24h', requests });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  // Until it ends: a count of looks is a time, too short on a loaded machine; the bound ends only a batch that never does.
  for (const end = Date.now() + waitBound(); Date.now() < end; ) {
    const seen = await call(e, key, `/v1/batches/${created.body.id}`);
    if (['completed', 'failed'].includes(seen.body.status)) return seen;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the batch did not end');
}

// A result's usage.cost is its charge, at the batch price.
const charge = (item: any) => item.response.body.usage?.cost ?? 0;

describe('a batch over providers pays each request before it is sent', () => {
  it.each([1, 4])('credits for 3 of 10 requests (concurrency %i): 3 sent, the batch fails with a 402, charges exact', async (concurrency) => {
    const gateway = await gatewayWith(`short-${concurrency}`, concurrency);
    try {
      const credits = 3.5 * HOLD;
      const { apiKey } = gateway.store.createWorkspace(`ws-${concurrency}`, credits);
      asked = 0;
      const seen = await runBatch(gateway, apiKey, 10);
      const batch = seen.body;
      // Before: all 10 went upstream and the batch completed owing what the credits could not pay.
      expect(asked).toBe(3);
      expect(seen.status).toBe(200);
      expect(batch.status).toBe('failed');
      expect(batch.error).toMatchObject({ code: 402 });
      expect(batch.error.message).toMatch(/stopped after 3 of 10 requests; the other 7 were not sent and are not charged/);
      expect(batch.request_counts).toEqual({ total: 10, completed: 3, failed: 7 });
      const sent = batch.results.filter((r: any) => r.response.status_code === 200);
      const unsent = batch.results.filter((r: any) => r.response.status_code === 402);
      expect(sent).toHaveLength(3);
      expect(unsent).toHaveLength(7);
      expect(unsent[0].error).toMatchObject({ error_type: 'payment_required' });
      // Each answer cut at max_tokens costs its whole hold: exactly three holds, and what is left.
      expect(sent.map((r: any) => r.response.body.usage.completion_tokens)).toEqual([MAX_TOKENS, MAX_TOKENS, MAX_TOKENS]);
      const charged = Math.round(sent.reduce((sum: number, r: any) => sum + charge(r), 0) * 1e10) / 1e10;
      expect(batch.usage.cost).toBe(charged);
      expect(batch.usage.completion_tokens).toBe(3 * MAX_TOKENS);
      expect(gateway.store.balance(`ws-${concurrency}`)).toBe(Math.round((credits - charged) * 1e10) / 1e10);
      expect(gateway.store.balance(`ws-${concurrency}`)).toBeCloseTo(0.5 * HOLD, 10);
      // Read again: the same batch, nothing charged twice.
      expect((await call(gateway, apiKey, `/v1/batches/${batch.id}`)).body.usage.cost).toBe(charged);
      expect(gateway.store.balance(`ws-${concurrency}`)).toBe(Math.round((credits - charged) * 1e10) / 1e10);
    } finally {
      await gateway.close();
    }
  });

  it('credits for all: every request sent, completed, charged the sum of its items and no more', async () => {
    const gateway = await gatewayWith('enough', 4);
    try {
      const { apiKey } = gateway.store.createWorkspace('ws-rich', 1);
      asked = 0;
      const { body: batch } = await runBatch(gateway, apiKey, 6);
      expect(asked).toBe(6);
      expect(batch.status).toBe('completed');
      expect(batch.error).toBeNull();
      expect(batch.request_counts).toEqual({ total: 6, completed: 6, failed: 0 });
      const charged = Math.round(batch.results.reduce((sum: number, r: any) => sum + charge(r), 0) * 1e10) / 1e10;
      expect(batch.usage.cost).toBe(charged);
      expect(gateway.store.balance('ws-rich')).toBe(Math.round((1 - charged) * 1e10) / 1e10);
    } finally {
      await gateway.close();
    }
  });

  it.each([1, 3])('no bound (no prices, no max_tokens; concurrency %i): sent while the balance is above zero, never charged below it', async (concurrency) => {
    const gateway = await gatewayWith(`unbounded-${concurrency}`, concurrency, false);
    try {
      const credits = 1e-9;
      const ws = `ws-free-${concurrency}`;
      const { apiKey } = gateway.store.createWorkspace(ws, credits);
      asked = 0;
      const { body: batch } = await runBatch(gateway, apiKey, 10, {});
      // The first answer (the upstream's own usage.cost) costs more than the balance: it is charged what is left; only those already in flight follow it.
      expect(asked).toBeGreaterThanOrEqual(1);
      expect(asked).toBeLessThanOrEqual(concurrency);
      expect(batch.status).toBe('failed');
      expect(batch.error).toMatchObject({ code: 402 });
      expect(batch.request_counts).toEqual({ total: 10, completed: asked, failed: 10 - asked });
      expect(batch.usage.cost).toBeGreaterThan(credits);
      // Before: the balance went to credits less the whole usage, below zero.
      expect(gateway.store.balance(ws)).toBe(0);
    } finally {
      await gateway.close();
    }
  });

  it('an internal failure mid-batch lets every hold go: charged the answered items, nothing held after', async () => {
    const gateway = await gatewayWith('internal', 2);
    try {
      const { apiKey } = gateway.store.createWorkspace('ws-broken', 1);
      // The results' writer breaks on the third item (not a disk failure: an internal error).
      const batches = gateway.store.batches;
      const open = batches.openResults.bind(batches);
      let appended = 0;
      batches.openResults = (id) => {
        const sink = open(id);
        return { append: (item) => (++appended === 3 ? (() => { throw new Error('broken writer'); })() : sink.append(item)), close: () => sink.close() };
      };
      const { body: batch } = await runBatch(gateway, apiKey, 6);
      expect(batch.status).toBe('failed');
      expect(batch.error.message).toMatch(/internal error: broken writer/);
      const charged = Math.round(batch.results.reduce((sum: number, r: any) => sum + charge(r), 0) * 1e10) / 1e10;
      // Before: the hold of the item whose write broke stayed taken from the balance for good.
      await vi.waitFor(() => expect(gateway.store.balance('ws-broken')).toBe(Math.round((1 - charged) * 1e10) / 1e10), SETTLE);
      await vi.waitFor(() => expect(gateway.store.batches.get(batch.id)!.holds_released).toBe(true), SETTLE);
      expect(gateway.store.balance('ws-broken')).toBe(Math.round((1 - charged) * 1e10) / 1e10);
      for (let i = 0; i < 6; i++) expect(gateway.store.charged(`batch:${batch.id}:r${i}`)).toBe(false);
    } finally {
      await gateway.close();
    }
  });
});
