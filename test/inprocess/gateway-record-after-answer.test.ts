import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';

// A whole (not streamed) answer through the gateway ends before its generation's record is made: the
// record is what the caller does not need first, and making it before the answer's end delayed every
// answer by it. The charge is still on disk before the end (answer-after-charges.ts), and the record is
// there for the caller's next call.
/** For each generation kept, whether the answer of the request being served had ended then. */
const endedWhenKept = new Map<string, boolean>();
let serving: ServerResponse | undefined;

const USAGE = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
const gw = gatewayForAll({
  prefix: 'gw-record-after-',
  upstreams: { up: (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.endsWith('/embeddings')) return res.end(JSON.stringify({ object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], usage: USAGE }));
    if (req.url?.endsWith('/responses')) return res.end(JSON.stringify({ id: 'resp_up', object: 'response', status: 'completed', model: 'r', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'yes' }] }], usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } }));
    res.end(JSON.stringify({ id: 'gen-up', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'yes' }, finish_reason: 'stop' }], usage: USAGE }));
  } },
  providers: ({ up }) => `
providers:
  - name: up
    base_url: ${up}
    responses: true
    models: { test/chat: m }
    embedding_models: { test/embed: e }
    prices: { test/chat: { prompt: 0.001, completion: 0.002 }, test/embed: { prompt: 0.001, completion: 0 } }
`,
  stateName: 'state',
});

// Once the gateway is up (gatewayForAll's beforeAll runs first): notes, as each generation is kept, whether its answer had ended.
beforeAll(() => {
  gw.gateway.server.prependListener('request', (_req, res: ServerResponse) => (serving = res));
  const keep = gw.gateway.store.keepGeneration.bind(gw.gateway.store);
  gw.gateway.store.keepGeneration = (id, kept) => {
    endedWhenKept.set(id, serving?.writableEnded === true);
    keep(id, kept);
  };
});

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${gw.gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
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
    const journal = readdirSync(join(gw.dir, 'state')).filter((f) => f.startsWith('charges.')).map((f) => readFileSync(join(gw.dir, 'state', f), 'utf8')).join('');
    expect(journal).toContain(`"g":"${id}"`);
    const res = await fetch(`${gw.gateway.apiRoot}/v1/generation?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { id: string; total_cost: number } }).data).toMatchObject({ id, total_cost: expect.any(Number) });
  });
});
