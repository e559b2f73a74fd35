import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { waitBound } from '../support/until.js';

// A batch over a provider with no prices and requests with no max_tokens: nothing bounds a request's
// cost before it is answered. Each request holds the largest charge of the batch's answers so far,
// and an answer is charged at most what is left of the balance: the balance never goes below zero.
// Before, `batch_concurrency` requests in flight were each charged in full (0.5 credits went to -0.3).
const UPSTREAM_COST = 0.4;
/** One answer's charge: its usage.cost at the batch price. */
const CHARGE = UPSTREAM_COST * 0.5;
let dir: string;
let upstream: LocalUpstream;
/** Requests the upstream holds until `gate` of them wait; then it answers every one at once. */
let gate = 1;
const waiting: (() => void)[] = [];
let asked = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-batch-unbounded-'));
  upstream = await localUpstream((_req, res, body) => {
    asked++;
    waiting.push(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `gen-${asked}-${Math.random().toString(36).slice(2)}`, object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, cost: UPSTREAM_COST } }));
    });
    if (waiting.length >= gate) {
      gate = 1;
      for (const answer of waiting.splice(0)) answer();
    }
  });
});

afterAll(async () => {
  for (const answer of waiting.splice(0)) answer();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(e: Emulator, key: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${e.apiRoot}${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: await res.json() };
}

/** Runs a batch of `n` requests with no limit over a gateway of `concurrency`, on `credits`; the batch once it ended. */
async function runBatch(concurrency: number, credits: number, n: number) {
  const yaml = `batch_concurrency: ${concurrency}\nproviders:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/free: m } }\n`;
  const gateway = await startEmulator({ stateDir: join(dir, `c${concurrency}`), port: 0, batchDelayMs: 0, gateway: { config: parseProviders(yaml, {}) } });
  try {
    const { apiKey } = gateway.store.createWorkspace(`ws-${concurrency}`, credits);
    asked = 0;
    gate = concurrency;
    const requests = Array.from({ length: n }, (_, i) => ({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `tell me about ${i}` }] } }));
    const created = await call(gateway, apiKey, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'test/free', completion_window: '24h', requests });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    // Until it ends: a count of looks is a time, too short on a loaded machine; the bound ends only a batch that never does.
    for (const end = Date.now() + waitBound(); Date.now() < end; ) {
      const seen = await call(gateway, apiKey, `/v1/batches/${created.body.id}`);
      if (['completed', 'failed'].includes(seen.body.status)) return { batch: seen.body, balance: gateway.store.balance(`ws-${concurrency}`) };
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the batch did not end');
  } finally {
    await gateway.close();
  }
}

describe('a batch with no bound on little credit', () => {
  it('four requests in flight at once, credits for two and a half answers: the balance ends at zero, not below', async () => {
    const { batch, balance } = await runBatch(4, 2.5 * CHARGE, 10);
    // The first four were all in flight before any answer came: together they cost more than the credits.
    expect(asked).toBeGreaterThanOrEqual(4);
    expect(balance).toBe(0);
    expect(batch.status).toBe('failed');
    expect(batch.error).toMatchObject({ code: 402 });
    expect(batch.request_counts).toEqual({ total: 10, completed: asked, failed: 10 - asked });
    // The items say what the answers cost; past the credits, that was not charged.
    expect(batch.usage.cost).toBeCloseTo(asked * CHARGE, 10);
    expect(batch.usage.cost).toBeGreaterThan(2.5 * CHARGE);
  });

  it('one at a time: a request is sent only while the balance covers the largest answer so far', async () => {
    const { batch, balance } = await runBatch(1, 2.5 * CHARGE, 10);
    // The first holds nothing and costs CHARGE; the second holds CHARGE; a third would not fit in what is left.
    expect(asked).toBe(2);
    expect(balance).toBeCloseTo(0.5 * CHARGE, 10);
    expect(batch.request_counts).toEqual({ total: 10, completed: 2, failed: 8 });
    expect(batch.error.message).toMatch(/stopped after 2 of 10 requests/);
  });
});
