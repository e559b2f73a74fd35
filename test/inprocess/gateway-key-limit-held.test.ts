import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pricedGateway, sseChunk } from '../support/upstreams.js';

// A key's limit counts what its requests in flight hold, not only what they were charged: two bounded
// streams of one key, each within its limit but not both, are not both let through (the second is a
// 403 while the first holds its bound), and once the first is paid the limit counts its charge.
const PRICE = 0.001;
let gw: Awaited<ReturnType<typeof pricedGateway>>;
const waiting: ServerResponse[] = [];
let seen: () => void;
const first = new Promise<void>((resolve) => (seen = resolve));

beforeAll(async () => {
  gw = await pricedGateway((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseChunk('hi'));
    waiting.push(res);
    seen();
  }, PRICE);
});

afterAll(() => gw?.close());

const call = (method: string, path: string, key: string, body?: unknown) => gw.call(method, path, key, body);

it('a bounded stream in flight holds its bound against its key limit', async () => {
  // Each request's bound is about 1 USD (1000 completion tokens), the limit 1.5: one fits, two do not.
  const key = await gw.keyWithLimit('capped', 1.5);
  const ask = () => call('POST', '/v1/chat/completions', key, { model: 'test/m', stream: true, max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] });
  const open = await ask();
  expect(open.status).toBe(200);
  const reader = open.body!.getReader();
  await first;
  const second = await ask();
  // (Checked before its body is read: one let through would wait on the upstream.)
  expect(second.status).toBe(403);
  expect(await second.text()).toContain('Key limit exceeded');
  // The first ends: its charge (its usage's 5 tokens) is what the key used.
  const end = waiting[0]!;
  end.write(`data: ${JSON.stringify({ id: 'gen-local', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } })}\n\n`);
  end.end('data: [DONE]\n\n');
  while (!(await reader.read()).done);
  const data = ((await (await call('GET', '/v1/key', key)).json()) as { data: { usage: number; limit_remaining: number } }).data;
  expect(data.usage).toBeCloseTo(5 * PRICE, 10);
  expect(data.limit_remaining).toBeCloseTo(1.5 - data.usage, 10);
  expect((await ask()).status).toBe(200);
  expect(waiting).toHaveLength(2);
  waiting[1]!.end('data: [DONE]\n\n');
});
