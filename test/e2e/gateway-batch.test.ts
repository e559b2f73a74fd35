import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../dist/emulator/server.js';
import { serveApi, spawnServe } from '../support/serve-process.js';
import { waitBound } from '../support/until.js';

// A batch whose model lives on an upstream (no batch API asked of it): its requests run through the
// gateway, its progress on disk; a gateway killed with -9 mid-batch goes on after a restart.
const dir = mkdtempSync(join(tmpdir(), 'router-gateway-batch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


const serve = (providers: string, env: Record<string, string>) => spawnServe(['--state', join(dir, 'gateway'), '--batch-delay-ms', '150', '--providers', providers], env);

const api = serveApi;

describe('a batch over an upstream provider', () => {
  it('completes once across a gateway kill -9, two requests at a time: each request answered once, the cost charged once', async () => {
    const upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
    try {
      const providers = join(dir, 'providers.yaml');
      writeFileSync(providers, `batch_concurrency: 2\nproviders:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/chat: local/lorem }, prices: { test/chat: { prompt: 0.000001, completion: 0.000002 } } }\n`);
      const env = { UP_KEY: upstream.store.firstKeys().apiKey };
      const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
      // Upstream answers two items, then holds the rest until the kill: the batch is caught part done however slow the
      // machine (8 items of 150 ms, two at a time, could all be done between two looks at load 30).
      const upstreamFaults = (faults: string[]) =>
        fetch(`${upstream.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${upstream.store.operatorKey()}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults }) });
      expect((await upstreamFaults(['slow,delay_ms=1,times=2,path=/v1/chat/completions', 'slow,delay_ms=600000,path=/v1/chat/completions'])).status).toBe(200);
      const first = await serve(providers, env);
      let created: any;
      try {
        created = await api(first, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'test/chat', completion_window: '24h', requests: ids.map((id) => ({ custom_id: id, body: { messages: [{ role: 'user', content: `write 10 words about ${id}` }], max_tokens: 40 } })) });
        expect(created.status).toBe(202);
        let seen: any;
        for (const end = Date.now() + waitBound(); Date.now() < end; ) {
          seen = (await api(first, `/v1/batches/${created.json.id}`)).json;
          if (seen.request_counts?.completed >= 2) break;
          await new Promise((r) => setTimeout(r, 25));
        }
        expect(seen.request_counts.completed).toBeGreaterThanOrEqual(2);
        expect(seen.request_counts.completed).toBeLessThan(ids.length);
        // Two more sent (each held before it was): the kill catches them in flight.
        for (const end = Date.now() + waitBound(); Date.now() < end && upstream.requestLog.filter((r) => r.path === '/v1/chat/completions').length < 4; ) await new Promise((r) => setTimeout(r, 25));
      } finally {
        first.child.kill('SIGKILL');
        await first.exited;
      }
      // On disk at the kill: the holds of the two requests in flight, and nothing else of the batch's.
      const charges = JSON.parse(readFileSync(join(dir, 'gateway', 'state.json'), 'utf8')).charges ?? {};
      expect(Object.keys(charges).filter((k) => k.startsWith(`batch:${created.json.id}:`))).toHaveLength(2);
      expect((await upstreamFaults([])).status).toBe(200);

      const second = await serve(providers, env);
      try {
        let done: any;
        // Until it is done (400 looks can be too few on a loaded machine).
        for (const end = Date.now() + waitBound(); Date.now() < end; ) {
          done = (await api(second, `/v1/batches/${created.json.id}`)).json;
          if (done.status === 'completed') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(done.status).toBe('completed');
        expect(done.request_counts).toMatchObject({ total: ids.length, completed: ids.length, failed: 0 });
        expect(done.results.map((r: any) => r.custom_id).sort()).toEqual(ids);
        for (const r of done.results) expect([r.response.status_code, r.response.body.model, r.response.body.provider]).toEqual([200, 'test/chat', 'up']);
        // Asked upstream at most twice more than it has answers: the two in flight at the kill.
        const asked = upstream.requestLog.filter((r) => r.path === '/v1/chat/completions').length;
        expect(asked).toBeGreaterThanOrEqual(ids.length);
        expect(asked).toBeLessThanOrEqual(ids.length + 2);
        const credits = (await api(second, '/v1/credits', undefined, second.info.management_key)).json.data;
        expect(done.usage.cost).toBeGreaterThan(0);
        // The held-but-unanswered two were sent again under their holds and settled at their real cost: charged exactly once.
        expect(credits.total_usage).toBe(done.usage.cost);
        const after = JSON.parse(readFileSync(join(dir, 'gateway', 'state.json'), 'utf8')).charges ?? {};
        expect(Object.keys(after).filter((k) => k.startsWith(`batch:${created.json.id}`))).toEqual([]);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    } finally {
      await upstream.close();
    }
  });
});
