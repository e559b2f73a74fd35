import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// An upstream that gives every answer one id (some servers send a constant one): the gateway's
// generations were named by it, so each answer overwrote the last one's generation and content.
type Body = Record<string, unknown>;

const SAME = 'chatcmpl-123';

let dir: string;
let upstream: Server;
let gateway: Emulator;

/** The upstream's answers: chat whole and streamed (many plain chunks), Responses whole and streamed, embeddings; always the one id. */
function answer(path: string, body: Body): { stream?: string[]; json?: Body } {
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  const said = String((body.input ?? (body.messages as Body[] | undefined)?.[0]?.content) as string);
  if (path.endsWith('/embeddings')) return { json: { id: SAME, object: 'list', model: body.model, data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 3, total_tokens: 3 } } };
  if (path.endsWith('/responses')) {
    const response = { id: SAME, object: 'response', created_at: 1, model: body.model, status: 'completed', output: [{ type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: `re ${said}` }] }], usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } };
    if (!body.stream) return { json: response };
    return { stream: [{ type: 'response.created', response: { ...response, status: 'in_progress', output: [] } }, { type: 'response.output_text.delta', item_id: 'msg_1', delta: `re ${said}` }, { type: 'response.completed', response }].map((e) => JSON.stringify(e)) };
  }
  if (!body.stream) return { json: { id: SAME, object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: `re ${said}` }, finish_reason: 'stop' }], usage } };
  const chunk = (delta: Body, finish: string | null = null, more: Body = {}) => JSON.stringify({ id: SAME, object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...more });
  return { stream: [chunk({ role: 'assistant', content: '' }), chunk({ content: 're' }), chunk({ content: ' ' }), chunk({ content: said }), chunk({}, 'stop'), JSON.stringify({ id: SAME, object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage })] };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-same-id-'));
  upstream = createServer((req, res) => {
    let text = '';
    req.on('data', (b: Buffer) => (text += b.toString()));
    req.on('end', () => {
      const got = answer(req.url ?? '', JSON.parse(text) as Body);
      if (got.json) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(got.json));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${got.stream!.map((d) => `data: ${d}\n\n`).join('')}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const yaml = `providers:\n  - { name: same, base_url: "${url}", responses: true, models: { test/chat: up-chat }, embedding_models: { test/embed: up-embed }, prices: { test/chat: { prompt: 0.001, completion: 0.002 }, test/embed: { prompt: 0.0001 } } }\n`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, {}) } });
});

afterAll(async () => {
  await gateway?.close();
  await new Promise((r) => upstream?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const post = async (path: string, body: Body): Promise<Response> => {
  const res = await fetch(`${gateway.apiRoot}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return res;
};

/** The `data:` payloads of an event stream, parsed ([DONE] left out). */
const events = (text: string): Body[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)) as Body);

const generation = async (id: string) => {
  const res = await fetch(`${gateway.apiRoot}/v1/generation?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Body }).data;
};

const content = async (id: string) => {
  const res = await fetch(`${gateway.apiRoot}/v1/generation/content?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gateway.store.firstKeys().managementKey}` } });
  expect(res.status).toBe(200);
  return JSON.stringify(await res.json());
};

/** Two calls' ids as the caller saw them: distinct, the gateway's, each generation retrievable with the repeated one as `upstream_id`. */
async function twoGenerations(call: (said: string) => Promise<string>, prefix: RegExp, kept = true): Promise<void> {
  const ids = [await call('one'), await call('two')];
  expect(ids[0]).not.toBe(ids[1]);
  for (const [i, id] of ids.entries()) {
    expect(id).toMatch(prefix);
    const g = await generation(id);
    expect(g.id).toBe(id);
    expect(g.upstream_id).toBe(SAME);
    expect(g.provider_name).toBe('same');
    if (kept) expect(await content(id)).toContain(`re ${['one', 'two'][i]}`);
  }
}

describe('an upstream that gives every answer the same id', () => {
  it('whole chat answers get ids of the gateway: two calls, two generations', async () => {
    await twoGenerations(async (said) => ((await (await post('/chat/completions', { model: 'test/chat', messages: [{ role: 'user', content: said }] })).json()) as Body).id as string, /^gen-/);
  });

  it('every chunk of a stream carries the gateway id, plain chunks relabelled without a parse too', async () => {
    await twoGenerations(async (said) => {
      const chunks = events(await (await post('/chat/completions', { model: 'test/chat', messages: [{ role: 'user', content: said }], stream: true })).text());
      expect(chunks.length).toBeGreaterThan(4);
      const ids = new Set(chunks.map((c) => c.id));
      expect(ids.size).toBe(1);
      expect(chunks.map((c) => c.choices && (c.choices as Body[])[0]?.delta && ((c.choices as Body[])[0]!.delta as Body).content).join('')).toContain(`re ${said}`);
      expect(chunks.every((c) => c.model === 'test/chat' && c.provider === 'same')).toBe(true);
      return [...ids][0] as string;
    }, /^gen-/);
  });

  it('Responses answers, whole and streamed, carry the gateway id', async () => {
    await twoGenerations(async (said) => ((await (await post('/responses', { model: 'test/chat', input: said })).json()) as Body).id as string, /^gen-/);
    await twoGenerations(async (said) => {
      const got = events(await (await post('/responses', { model: 'test/chat', input: said, stream: true })).text()).filter((e) => e.response);
      const ids = new Set(got.map((e) => (e.response as Body).id));
      expect(ids.size).toBe(1);
      return [...ids][0] as string;
    }, /^gen-/);
  });

  // docs/gateway.md: a caller sends items back as the next turn's input, to the provider that made them.
  it("Responses output items and the events naming them keep the provider's item ids", async () => {
    const whole = (await (await post('/responses', { model: 'test/chat', input: 'x' })).json()) as Body;
    expect((whole.output as Body[]).map((o) => o.id)).toEqual(['msg_1']);
    const streamed = events(await (await post('/responses', { model: 'test/chat', input: 'x', stream: true })).text());
    expect(streamed.filter((e) => 'item_id' in e).map((e) => e.item_id)).toEqual(['msg_1']);
    const done = streamed.find((e) => e.type === 'response.completed')!.response as Body;
    expect(done.id).toMatch(/^gen-/);
    expect((done.output as Body[]).map((o) => o.id)).toEqual(['msg_1']);
  });

  it('embeddings carry the gateway id', async () => {
    await twoGenerations(async (said) => ((await (await post('/embeddings', { model: 'test/embed', input: said })).json()) as Body).id as string, /^emb-/, false);
  });
});
