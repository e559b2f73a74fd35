import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { MemoryStore } from '../../src/emulator/state/memory-store.js';
import { waitBound } from '../support/until.js';

// The emulator over another Store than its files: every route keeps and reads its state through
// the interface, so over the memory store it serves chat, credits, generations and batches and
// writes nothing in its state folder.
let dir: string;
let emu: Emulator;
let key: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-memory-store-'));
  emu = await startEmulator({ stateDir: dir, port: 0, batchDelayMs: 0, store: new MemoryStore() });
  key = emu.store.firstKeys().apiKey;
});
afterAll(async () => {
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown, k = key) {
  const res = await fetch(`${emu.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

describe('an emulator over the memory store', () => {
  it('answers a chat, charges it, keeps its generation, and runs a batch to its results, with no file written', async () => {
    const chat = await call('POST', '/v1/chat/completions', { model: 'local/lorem', messages: [{ role: 'user', content: 'write 5 words' }] });
    expect(chat.status).toBe(200);
    expect(chat.json.usage.cost).toBeGreaterThan(0);
    expect(emu.store.balance('default')).toBeCloseTo(5 - chat.json.usage.cost, 10);
    const credits = await call('GET', '/v1/credits', undefined, emu.store.firstKeys().managementKey);
    expect(credits.json.data.total_usage).toBeCloseTo(chat.json.usage.cost, 10);
    const generation = await call('GET', `/v1/generation?id=${chat.json.id}`);
    expect(generation.status).toBe(200);
    expect(generation.json.data).toMatchObject({ id: chat.json.id, total_cost: chat.json.usage.cost });

    const ids = ['a', 'b', 'c'];
    const created = await call('POST', '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', requests: ids.map((custom_id) => ({ custom_id, body: { messages: [{ role: 'user', content: `say ${custom_id}` }] } })) });
    expect(created.status).toBe(202);
    let seen: any;
    // Until it is over (400 looks can be too few on a loaded machine).
    for (const end = Date.now() + waitBound(); Date.now() < end; ) {
      seen = (await call('GET', `/v1/batches/${created.json.id}`)).json;
      if (seen.status === 'completed' || seen.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(seen.status).toBe('completed');
    expect(seen.request_counts).toMatchObject({ total: 3, completed: 3, failed: 0 });
    expect(seen.results.map((r: any) => r.custom_id).sort()).toEqual(ids);
    expect((await call('GET', '/v1/batches')).json.data.map((b: any) => b.id)).toEqual([created.json.id]);
    expect(readdirSync(dir)).toEqual([]);
  });
});
