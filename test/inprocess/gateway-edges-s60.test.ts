import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type EmulatorOptions, type Flavor } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// The gateway's edges left at stop 59, each over real HTTP to an in-process `router serve`.
let dir: string;
const started: Emulator[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-edges-s60-'));
});

afterAll(async () => {
  for (const e of started) await e.close();
  rmSync(dir, { recursive: true, force: true });
});

async function emulator(name: string, opts: Partial<EmulatorOptions> = {}): Promise<Emulator> {
  const e = await startEmulator({ port: 0, batchDelayMs: 0, ...opts, stateDir: join(dir, name) });
  started.push(e);
  return e;
}

async function call(e: Emulator, path: string, body?: unknown, key = e.store.firstKeys().apiKey): Promise<{ status: number; body: any }> {
  const res = await fetch(`${e.apiRoot}${path}`, { method: body ? 'POST' : 'GET', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: await res.json() };
}

async function runBatch(e: Emulator, flavor: Flavor, endpoint: string, model: string, bodies: Record<string, unknown>[]): Promise<any> {
  const path = flavor === 'deployed' ? '/beta/batches' : '/v1/batches';
  const created = await call(e, path, { endpoint, model, completion_window: '24h', requests: bodies.map((body, i) => ({ custom_id: `r${i}`, body })) });
  expect(created.body.id, JSON.stringify(created.body)).toMatch(/^batch_/);
  for (;;) {
    const seen = (await call(e, `${path}/${created.body.id}`)).body;
    if (seen.status === 'completed') return seen;
    expect(seen.status).not.toBe('failed');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['spec', 'deployed'] as const)('a batch result’s content (%s)', (flavor) => {
  // The deployed notes: a batch's "inputs/results kept 30 days"; its generations answered
  // /v1/generation, but /v1/generation/content was a 404 "No stored content for generation gen-batch-…".
  it('answers /v1/generation/content by its gen-batch id: what was asked and answered; another workspace’s is a 404', async () => {
    const e = await emulator(`content-${flavor}`, { flavor });
    const seen = await runBatch(e, flavor, '/v1/chat/completions', 'local/echo', [{ messages: [{ role: 'user', content: 'say this back' }] }]);
    const body = seen.results[0].response.body;
    const got = await call(e, `/v1/generation/content?id=${body.id}`, undefined, e.store.firstKeys().managementKey);
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.data).toEqual({ input: { messages: [{ role: 'user', content: 'say this back' }] }, output: { completion: body.choices[0].message.content, reasoning: null }, error: null });
    const other = e.store.createWorkspace('other', 1);
    expect((await call(e, `/v1/generation/content?id=${body.id}`, undefined, other.managementKey)).status).toBe(404);
    // A Responses batch's answer and a messages batch's too, by the ids their bodies carry.
    for (const [endpoint, asked] of [['/v1/responses', { input: 'three' }], ['/v1/messages', { max_tokens: 16, messages: [{ role: 'user', content: 'four' }] }]] as const) {
      const result = (await runBatch(e, flavor, endpoint, 'local/echo', [asked])).results[0].response.body;
      const content = await call(e, `/v1/generation/content?id=${result.id}`, undefined, e.store.firstKeys().managementKey);
      expect(content.status, endpoint).toBe(200);
      expect(content.body.data.output.completion, endpoint).toBe(endpoint === '/v1/responses' ? result.output_text : result.content[0].text);
    }
  });
});
