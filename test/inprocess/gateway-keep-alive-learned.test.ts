import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testGateway } from '../support/upstreams.js';

// An upstream that closes idle connections sooner than the 1 s the gateway keeps them when it gives no
// Keep-Alive hint met a request sent as it closed one now and then (a 502 "connection lost": a paid request
// is never sent again). Now a connection the upstream closes first halves how long that origin's idle
// connections are kept: once the upstream closed one, the next is let go by the gateway before it.
const IDLE_CLOSE_MS = 900;
const ANSWER = JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } });
/** Who ended each connection, in the order they closed: 'upstream' (its idle timer) or 'gateway' (a FIN first). */
const endedBy: string[] = [];
let closedOne: (() => void) | undefined;

// A bare HTTP/1.1 server (node's own adds a Keep-Alive hint, and closes idle connections later than asked).
const upstream = createServer((s: Socket) => {
  let idle: NodeJS.Timeout | undefined;
  let by: string | undefined;
  let raw = Buffer.alloc(0);
  s.on('data', (d: Buffer) => {
    clearTimeout(idle);
    raw = Buffer.concat([raw, d]);
    const head = raw.indexOf('\r\n\r\n');
    const length = Number(/content-length: *(\d+)/i.exec(raw.subarray(0, head).toString())?.[1] ?? 0);
    if (head < 0 || raw.length < head + 4 + length) return;
    raw = raw.subarray(head + 4 + length);
    s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(ANSWER)}\r\nconnection: keep-alive\r\n\r\n${ANSWER}`);
    idle = setTimeout(() => ((by ??= 'upstream'), s.end()), IDLE_CLOSE_MS);
  });
  s.on('end', () => {
    by ??= 'gateway';
    clearTimeout(idle);
    s.end();
  });
  s.on('error', () => {});
  s.on('close', () => {
    endedBy.push(by ?? 'unknown');
    closedOne?.();
  });
});
let gw: Awaited<ReturnType<typeof testGateway>>;

beforeAll(async () => {
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  gw = await testGateway(`providers:\n  - { name: up, base_url: "http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1", models: { test/m: m } }\n`, 'keep-alive-learned');
});
afterAll(async () => {
  await gw?.close();
  upstream.close();
});

async function askAndWaitForItsConnectionToClose(): Promise<void> {
  const closes = endedBy.length;
  const closed = new Promise<void>((resolve) => (closedOne = () => endedBy.length > closes && resolve()));
  const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: 'hi' }] }) });
  expect(res.status).toBe(200);
  await res.text();
  await closed;
}

/** The most connections asked for, until the gateway ends one before the upstream does. */
const ROUNDS = 8;

it('keeps an origin\'s idle connections half as long once its upstream closed one first', async () => {
  for (let i = 0; i < ROUNDS && !endedBy.includes('gateway'); i++) await askAndWaitForItsConnectionToClose();
  // Before: the upstream closed every one (1 s kept against its 900 ms, whose timer starts first), and would go on
  // closing them. Now it closes the first, and the gateway keeps the next 500 ms from when it has read the answer: a
  // machine that stalls that read by 400 ms lets the upstream close it first again, and the gateway halves again (250,
  // 125, then 100 ms, 800 ms before the upstream). So the gateway closes first in any round after the first.
  expect(endedBy[0]).toBe('upstream');
  expect(endedBy).toContain('gateway');
});
