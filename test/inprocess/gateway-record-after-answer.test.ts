import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A whole (not streamed) answer through the gateway ends before its generation's record is made: the
// record is what the caller does not need first, and making it before the answer's end delayed every
// answer by it. The charge is still on disk before the end (answer-after-charges.ts), and the record is
// there for the caller's next call.
let dir: string;
let up: LocalUpstream;
let gateway: Emulator;
let key: string;
/** For each generation kept, whether the answer of the request being served had ended then. */
const endedWhenKept = new Map<string, boolean>();
let serving: ServerResponse | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-record-after-'));
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  up = await localUpstream((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.endsWith('/embeddings')) return res.end(JSON.stringify({ object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], usage }));
    if (req.url?.endsWith('/responses')) return res.end(JSON.stringify({ id: 'resp_up', object: 'response', status: 'completed', model: 'r', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'yes' }] }], usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } }));
    res.end(JSON.stringify({ id: 'gen-up', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'yes' }, finish_reason: 'stop' }], usage }));
  });
  const yaml = `
providers:
  - name: up
    base_url: ${up.baseUrl}
    responses: true
    models: { test/chat: m }
    embedding_models: { test/embed: e }
    prices: { test/chat: { prompt: 0.001, completion: 0.002 }, test/embed: { prompt: 0.001, completion: 0 } }
`;
  gateway = await startEmulator({ stateDir: join(dir, 'state'), port: 0, gateway: { config: parseProviders(yaml, {}) } });
  key = gateway.store.firstKeys().apiKey;
  gateway.server.prependListener('request', (_req, res: ServerResponse) => (serving = res));
  const keep = gateway.store.keepGeneration.bind(gateway.store);
  gateway.store.keepGeneration = (id, kept) => {
    endedWhenKept.set(id, serving?.writableEnded === true);
    keep(id, kept);
  };
});
afterAll(async () => {
  await gateway?.close();
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string };
};

describe('a whole answer through the gateway ends before its generation is recorded', () => {
  it.each([
    ['chat', '/v1/chat/completions', { model: 'test/chat', messages: [{ role: 'user', content: 'hi' }] }],
    ['Responses', '/v1/responses', { model: 'test/chat', input: 'hi' }],
    ['embeddings', '/v1/embeddings', { model: 'test/embed', input: 'hi' }],
  ])('%s: the record made after the end, found by the next call, its charge on disk', async (_kind, path, body) => {
    const { id } = await post(path, body);
    expect(endedWhenKept.get(id)).toBe(true);
    const journal = readdirSync(join(dir, 'state')).filter((f) => f.startsWith('charges.')).map((f) => readFileSync(join(dir, 'state', f), 'utf8')).join('');
    expect(journal).toContain(`"g":"${id}"`);
    const res = await fetch(`${gateway.apiRoot}/v1/generation?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { id: string; total_cost: number } }).data).toMatchObject({ id, total_cost: expect.any(Number) });
  });
});
