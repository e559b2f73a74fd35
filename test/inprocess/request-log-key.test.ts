import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// The request log shows a request's headers less Authorization; it must not keep that value either
// (before, each entry held node's headers object, so the caller's key lived as long as the entry).
// What an entry keeps is read through the inspector: its properties, private fields included.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
const session = new Session();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-log-key-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP, models: { test/m: local/lorem } }\n`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP: upstream.store.firstKeys().apiKey }) } });
  session.connect();
});

afterAll(async () => {
  session.disconnect();
  delete (globalThis as Record<string, unknown>).__loggedEntry;
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Remote = { type: string; value?: unknown; objectId?: string };
type Property = { name: string; value?: Remote };

/** Every string an object keeps, `depth` objects deep, its private fields included. */
async function stringsKept(objectId: string, depth: number, out: string[] = []): Promise<string[]> {
  const { result, privateProperties } = (await session.post('Runtime.getProperties', { objectId, ownProperties: true })) as { result: Property[]; privateProperties?: Property[] };
  for (const p of [...result, ...(privateProperties ?? [])]) {
    const v = p.value;
    if (v?.type === 'string') out.push(v.value as string);
    else if (v?.type === 'object' && v.objectId && depth > 0) await stringsKept(v.objectId, depth - 1, out);
  }
  return out;
}

describe('the request log', () => {
  it("keeps the headers it shows, never the caller's Authorization", async () => {
    const key = gateway.store.firstKeys().apiKey;
    const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-title': 'log test' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: 'write 3 words' }] }) });
    expect(res.status).toBe(200);
    await res.text();
    const entry = gateway.requestLog.filter((e) => e.path.endsWith('/chat/completions')).at(-1)!;
    (globalThis as Record<string, unknown>).__loggedEntry = entry;
    const { result } = (await session.post('Runtime.evaluate', { expression: 'globalThis.__loggedEntry' })) as { result: Remote };
    const before = await stringsKept(result.objectId!, 3);
    expect(before.some((s) => s.includes('log test'))).toBe(true);
    expect(before.filter((s) => s.includes(key))).toEqual([]);
    // Shown, then kept as shown: still no key.
    expect(entry.headers).toMatchObject({ 'content-type': 'application/json', 'x-title': 'log test' });
    expect(entry.headers.authorization).toBeUndefined();
    const after = await stringsKept(result.objectId!, 3);
    expect(after.filter((s) => s.includes(key))).toEqual([]);
  });
});
