import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { OpenAICompatible } from '../../src/emulator/providers/openai-compatible.js';
import { sseChunk, testGateway } from '../support/upstreams.js';

// A stream cut on the way costs the connection it was on, and nothing more. With undici 7's Agent, the pool
// whose one connection was cut opened one more connection for nothing as the Agent closed it, and the next
// request a new pool's: 6 streams, cut ones and whole ones in turn, took 7 connections where 4 do.
let connections = 0;
let closed = 0;
let closing: (() => void) | undefined;
const upstream = createServer((req, res: ServerResponse) => {
  let raw = '';
  req.on('data', (d: Buffer) => (raw += d.toString()));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseChunk(null));
    res.write(sseChunk('token '));
    // "hold": the stream goes on until the gateway lets it go.
    if (!raw.includes('"hold"')) res.end(`${sseChunk(null, 'stop')}data: [DONE]\n\n`);
  });
});
upstream.on('connection', (s) => {
  connections++;
  s.on('close', () => (closed++, closing?.()));
});
let gw: Awaited<ReturnType<typeof testGateway>>;
beforeAll(async () => {
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  gw = await testGateway(`providers:\n  - { name: up, base_url: "http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1", models: { test/m: m } }\n`, 'upstream-pool');
});
afterAll(async () => {
  await gw?.close();
  upstream.closeAllConnections();
  upstream.close();
});

const ask = (content: string, signal?: AbortSignal) =>
  fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { signal, method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', stream: true, messages: [{ role: 'user', content }] }) });

it('streams the caller hangs up on, and whole ones, in turn: one connection for each cut, one more', async () => {
  for (let i = 0; i < 3; i++) {
    const caller = new AbortController();
    const reader = (await ask('hold', caller.signal)).body!.getReader();
    await reader.read();
    const before = closed;
    const letGo = new Promise<void>((resolve) => (closing = () => closed > before && resolve()));
    caller.abort();
    await reader.read().catch(() => {});
    await letGo;
    expect(await (await ask('hi')).text()).toContain('[DONE]');
  }
  // hold (1, let go), whole (2), hold on 2, whole (3), hold on 3, whole (4).
  expect(connections).toBe(4);
});

// The gateway's stop destroys each provider's pools, then waits up to 1 s for the answers still open: a request
// that reaches a provider only then (its body still coming, say) was given a new pool and sent upstream when its
// provider had not been asked before (undici's Agent, once destroyed, sends nothing more).
it('a provider stopped sends nothing more, to an origin it was never sent to either', async () => {
  const before = connections;
  const config = parseProviders(`providers:\n  - { name: later, base_url: "http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1", models: { test/m: m } }\n`, {});
  const provider = new OpenAICompatible(config.providers[0]!);
  await provider.close();
  const asked = provider.chat({ body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, stream: false, signal: new AbortController().signal });
  await expect(asked).rejects.toMatchObject({ reason: 'stopping' });
  await expect(provider.speech({ body: { model: 'm', input: 'hi' }, stream: false, signal: new AbortController().signal })).rejects.toMatchObject({ reason: 'stopping' });
  expect(connections).toBe(before);
});
