import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as idle } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { answersHi, testGateway } from '../support/upstreams.js';

// A request sent on an idle connection as the server closes it fails ("ECONNRESET", "other side closed"), and
// a paid one is never sent again. The client and the gateway's upstream Agent let an idle connection go well
// before the server would close it: 1 s under node's 5 s hint (before: 3 s, and undici's timer up to 1 s
// late), 1 s when the server gives no hint (before: 10 s, past uvicorn's 5 s and gunicorn's 2 s).
// Each test leaves a connection idle 2 s: the idle time is what is tested.

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

/** A server answering every request with an empty model list; `connections` counts the connections it was opened. */
async function countingServer(hint: boolean) {
  const server: Server = createServer((req, res) => {
    req.resume();
    // Setting Connection ourselves keeps node from adding its `Keep-Alive: timeout=5` hint.
    res.writeHead(200, hint ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', connection: 'keep-alive' });
    res.end('{"data":[]}');
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  open.push({ close });
  return { root: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, connections: () => connections };
}

async function twoCallsTwoSecondsApart(hint: boolean) {
  const server = await countingServer(hint);
  const client = new RouterClient({ apiKey: 'k', apiRoot: server.root, maxRetries: 0 });
  open.push(client);
  const first = await client.raw.send({ method: 'GET', path: '/v1/models' });
  await first.body.dump();
  await idle(2_000);
  await (await client.raw.send({ method: 'GET', path: '/v1/models' })).body.dump();
  return { hinted: first.headers['keep-alive'], connections: server.connections() };
}

it("lets a connection idle 2 s go under node's 5 s hint: the next call has a new one", async () => {
  expect(await twoCallsTwoSecondsApart(true)).toEqual({ hinted: 'timeout=5', connections: 2 });
});

it('lets a connection idle 2 s go when the server gives no hint', async () => {
  expect(await twoCallsTwoSecondsApart(false)).toEqual({ hinted: undefined, connections: 2 });
});

it("the gateway lets an upstream connection idle 2 s go under node's 5 s hint", async () => {
  const upstream = createServer((req, res) => req.resume().on('end', () => answersHi(req, res)));
  let connections = 0;
  upstream.on('connection', () => connections++);
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  open.push({ close: () => new Promise<void>((resolve) => (upstream.closeAllConnections(), upstream.close(() => resolve()))) });
  const gw = await testGateway(`providers:\n  - { name: up, base_url: "http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1", models: { test/m: m } }\n`, 'keep-alive');
  open.push(gw);
  const key = gw.gateway.store.firstKeys().apiKey;
  const ask = async () => {
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(200);
    await res.text();
  };
  await ask();
  await idle(2_000);
  await ask();
  expect(connections).toBe(2);
});
