import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../dist/emulator/server.js';
import { serveApi, spawnServe } from '../support/serve-process.js';
import { waitBound } from '../support/until.js';

// A batch over an upstream holds each request's credits before it is sent. However the batch ends,
// and whether or not the gateway was killed with -9 while requests were in flight, every hold is
// settled or given back once: none stays taken from the caller's balance.
const dir = mkdtempSync(join(tmpdir(), 'router-gateway-holds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


const serve = (providers: string, env: Record<string, string>) => spawnServe(['--state', join(dir, 'gateway'), '--batch-delay-ms', '0', '--providers', providers], env);

const api = serveApi;

const holdsOf = (batch: string) => Object.keys(JSON.parse(readFileSync(join(dir, 'gateway', 'state.json'), 'utf8')).charges ?? {}).filter((k) => k.startsWith(`batch:${batch}:`));

describe('the holds of a batch over an upstream', () => {
  it('expired while two requests were in flight, then kill -9: the restarted gateway gives both holds back', async () => {
    const upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
    try {
      const providers = join(dir, 'providers.yaml');
      writeFileSync(providers, `batch_concurrency: 2\nproviders:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/chat: local/lorem }, prices: { test/chat: { prompt: 0.000001, completion: 0.000002 } } }\n`);
      const env = { UP_KEY: upstream.store.firstKeys().apiKey };
      // The upstream never answers until the kill: the two requests sent stay in flight.
      const fault = await fetch(`${upstream.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${upstream.store.operatorKey()}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: ['slow,delay_ms=600000,path=/v1/chat/completions'] }) });
      expect(fault.status).toBe(200);
      const asked = () => upstream.requestLog.filter((r) => r.path === '/v1/chat/completions').length;
      const first = await serve(providers, env);
      let id = '';
      try {
        const created = await api(first, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'test/chat', completion_window: '24h', requests: ['a', 'b', 'c', 'd'].map((c) => ({ custom_id: c, body: { messages: [{ role: 'user', content: `about ${c}` }], max_tokens: 40 } })) });
        expect(created.status).toBe(202);
        id = created.json.id;
        for (const end = Date.now() + waitBound(); Date.now() < end && asked() < 2; ) await new Promise((r) => setTimeout(r, 25));
        expect(asked()).toBe(2);
        const held = (await api(first, '/v1/credits', undefined, first.info.management_key)).json.data.total_usage;
        expect(held).toBeGreaterThan(0);
        // Past the 24 h window: the next look expires the batch, its two requests still upstream.
        expect((await api(first, '/_emulator/clock', { advance_seconds: 25 * 3600 }, first.info.operator_key)).status).toBe(200);
        expect((await api(first, `/v1/batches/${id}`)).json.status).toBe('expired');
      } finally {
        first.child.kill('SIGKILL');
        await first.exited;
      }
      expect(holdsOf(id)).toHaveLength(2);
      const second = await serve(providers, env);
      try {
        // Before: an ended batch was never run again, so its two holds stayed taken for good.
        let usage = -1;
        for (const end = Date.now() + waitBound(); Date.now() < end; ) {
          usage = (await api(second, '/v1/credits', undefined, second.info.management_key)).json.data.total_usage;
          if (usage === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(usage).toBe(0);
        expect(holdsOf(id)).toEqual([]);
        const seen = (await api(second, `/v1/batches/${id}`)).json;
        expect(seen.status).toBe('expired');
        expect(seen.request_counts).toMatchObject({ total: 4, completed: 0 });
        expect(asked()).toBe(2);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    } finally {
      await fetch(`${upstream.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${upstream.store.operatorKey()}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: [] }) });
      await upstream.close();
    }
  });
});
