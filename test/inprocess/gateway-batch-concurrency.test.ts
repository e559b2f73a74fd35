import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders, ProvidersFileError } from '../../src/emulator/providers/config.js';
import { localUpstream } from '../support/upstreams.js';
import { waitBound } from '../support/until.js';

// A batch over an upstream runs `batch_concurrency` of its requests at once, never more.
const dir = mkdtempSync(join(tmpdir(), 'router-gateway-pool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How long the upstream waits, with the bound in flight, for a request beyond it before it answers one. */
const QUIET_MS = 100;

/**
 * An upstream for a batch of `n` requests that answers none until as many are in flight as the gateway may send
 * (`bound`, or all that are left) and then a moment passes with no more arriving; then it answers one, and waits so
 * again. A gateway that sends more than the bound has them all in flight together: counted as the most at once.
 */
async function countingUpstream(bound: number, n: number) {
  let inFlight = 0;
  let most = 0;
  let asked = 0;
  let answered = 0;
  const waiting: (() => void)[] = [];
  let quiet: NodeJS.Timeout | undefined;
  const answerOneWhenQuiet = () => {
    clearTimeout(quiet);
    if (inFlight > bound) {
      // Too many already: the rest answered at once, so that the batch ends and the test says so.
      for (const go of waiting.splice(0)) go();
      return;
    }
    if (inFlight < Math.min(bound, n - answered)) return;
    quiet = setTimeout(() => {
      waiting.shift()?.();
      answerOneWhenQuiet();
    }, QUIET_MS);
  };
  const up = await localUpstream((_req, res, body) => {
    asked++;
    inFlight++;
    most = Math.max(most, inFlight);
    waiting.push(() => {
      inFlight--;
      answered++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `c-${asked}`, object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } }));
    });
    answerOneWhenQuiet();
  });
  return { up, most: () => most, asked: () => asked };
}

async function runBatch(gateway: Emulator, n: number) {
  const key = gateway.store.firstKeys().apiKey;
  const call = async (path: string, body?: unknown) => {
    const res = await fetch(`${gateway.apiRoot}${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    return (await res.json()) as any;
  };
  const ids = Array.from({ length: n }, (_, i) => `r${i}`);
  const created = await call('/v1/batches', { endpoint: '/v1/chat/completions', model: 'test/chat', completion_window: '24h', requests: ids.map((custom_id) => ({ custom_id, body: { messages: [{ role: 'user', content: custom_id }] } })) });
  let seen: any;
  // Until it is over (a loaded machine can take more than 400 looks); the bound ends only a batch that never is.
  for (const end = Date.now() + waitBound(); Date.now() < end; ) {
    seen = await call(`/v1/batches/${created.id}`);
    if (seen.status === 'completed' || seen.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 25));
  }
  return { seen, ids };
}

describe('a batch over providers at a bounded concurrency', () => {
  it.each([
    [3, 10],
    [1, 4],
  ])('batch_concurrency %i: that many requests in flight at once, never more; each answered once', async (bound, n) => {
    const counting = await countingUpstream(bound, n);
    const config = parseProviders(`batch_concurrency: ${bound}\nproviders:\n  - { name: up, base_url: "${counting.up.baseUrl}", models: { test/chat: m } }\n`, {});
    const gateway = await startEmulator({ stateDir: join(dir, `g${bound}`), port: 0, batchDelayMs: 0, gateway: { config } });
    try {
      const { seen, ids } = await runBatch(gateway, n);
      expect(seen.status).toBe('completed');
      expect(seen.request_counts).toMatchObject({ total: n, completed: n, failed: 0 });
      expect(seen.results.map((r: any) => r.custom_id).sort()).toEqual([...ids].sort());
      expect(counting.asked()).toBe(n);
      expect(counting.most()).toBe(bound);
    } finally {
      await gateway.close();
      await counting.up.close();
    }
  });

  it('is 8 unless the file says; the file says a whole number from 1', () => {
    const file = (extra: string) => `${extra}providers:\n  - { name: up, base_url: "http://127.0.0.1:1/v1", models: { test/chat: m } }\n`;
    expect(parseProviders(file(''), {}).batchConcurrency).toBe(8);
    expect(parseProviders(file('batch_concurrency: 32\n'), {}).batchConcurrency).toBe(32);
    for (const bad of ['0', '2.5', '"4"', '1000']) expect(() => parseProviders(file(`batch_concurrency: ${bad}\n`), {})).toThrow(ProvidersFileError);
  });
});
