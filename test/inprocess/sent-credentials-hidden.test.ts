import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { inspect } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { APIError, RouterClient, StreamError } from '../../src/client/index.js';
import { toolEnv } from '../../src/kit/index.js';
import { runCliInProcess } from '../support/cli-env.js';
import { localService, type LocalUpstream } from '../support/upstreams.js';

// Every credential a request carries is a secret of its client, by the one rule of which headers hold one
// (internal/secret-headers.ts): the key, a gateway's own header (`x-portkey-api-key`), a call's `x-api-key`. A server
// that echoes the request's headers in its refusal must not have any of them in the error a program logs, nor may a
// tool's environment hold one. Before, only the key and an `authorization` header of the client's counted, and an
// error in the service's own shape (`{"error":{"message"}}`) kept even the key as the server said it.
const KEY = 'sk-or-v1-sent-0123456789abcdef0123456789';
const GATEWAY = 'pk-gateway-ABCDEFGHIJKLMNOPQRSTUV-1234';
const CALL = 'call-key-0123456789-ZYXWVUTSRQPONM';
let service: LocalUpstream;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-sent-credentials-'));
  service = await localService((req, res) => {
    const said = `refused: ${JSON.stringify(req.headers)}`;
    if (req.url?.includes('/ok')) return res.writeHead(200, { 'content-type': 'application/json', 'x-seen': JSON.stringify(req.headers) }).end(JSON.stringify({ seen: req.headers }));
    if (req.url?.includes('/chat/completions') && req.headers.accept === 'text/event-stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end(`data: ${JSON.stringify({ error: { code: 502, message: said } })}\n\n`);
    }
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 400, message: said } }));
  });
});
afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

const apiRoot = () => service.baseUrl.replace(/\/v1$/, '/api');
const ask = { model: 'a/b', messages: [{ role: 'user' as const, content: 'x' }] };
const shown = (err: unknown) => `${(err as Error).message}\n${JSON.stringify((err as APIError).body)}\n${(err as APIError).said}`;

it("a refusal in the service's shape that echoes the key and the client's secret headers: none of them in the error", async () => {
  const client = new RouterClient({ apiKey: KEY, apiRoot: apiRoot(), headers: { 'x-portkey-api-key': GATEWAY }, maxRetries: 0 });
  try {
    const err = await client.chat.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    const text = shown(err);
    expect(text).toContain('"authorization":"Bearer ****"');
    expect(text).toContain('"x-portkey-api-key":"****"');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(GATEWAY);
  } finally {
    await client.close();
  }
});

it("a call's own credential headers are hidden in its error; the client's are kept from a tool's environment", async () => {
  const client = new RouterClient({ apiKey: KEY, apiRoot: apiRoot(), headers: { 'x-portkey-api-key': GATEWAY }, maxRetries: 0 });
  try {
    const err = await client.chat.create(ask, { headers: { 'x-api-key': CALL } }).catch((e: unknown) => e);
    const text = shown(err);
    expect(text).toContain('"x-api-key":"****"');
    expect(text).not.toContain(CALL);
    // A program that read its client's header from a variable of its own: a tool it starts does not get it.
    expect(toolEnv({ PATH: '/usr/bin', GATEWAY_TOKEN: GATEWAY })).toEqual({ PATH: '/usr/bin' });
  } finally {
    await client.close();
  }
});

it('an error event in a stream that echoes the credentials: none of them in the StreamError', async () => {
  const client = new RouterClient({ apiKey: KEY, apiRoot: apiRoot(), headers: { 'x-portkey-api-key': GATEWAY }, maxRetries: 0 });
  try {
    const err = await (async () => {
      for await (const chunk of await client.chat.stream(ask, { headers: { 'x-api-key': CALL } })) void chunk;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamError);
    const text = shown(err);
    expect(text).toContain('"x-portkey-api-key":"****"');
    for (const secret of [KEY, GATEWAY, CALL]) expect(text).not.toContain(secret);
  } finally {
    await client.close();
  }
});

it.each([
  [['-i', '-H', `x-api-key: ${CALL}`, '/v1/ok'], 0],
  [['-H', `Authorization: Bearer ${CALL}`, '/v1/fail'], 2],
  [['--verbose', '-H', `x-api-key: ${CALL}`, '/v1/fail'], 2],
])('router api %j: a credential given with -H is hidden in what the server echoes, stdout and stderr', async (args, code) => {
  const r = await runCliInProcess(['api', ...args], { env: { ROUTER_API_ROOT: apiRoot(), ROUTER_API_KEY: KEY, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'state') } });
  expect(r.code, r.stderr).toBe(code);
  expect(`${r.stdout}${r.stderr}`).not.toContain(CALL);
  expect(`${r.stdout}${r.stderr}`).toMatch(/"(x-api-key|authorization)":"(Bearer )?\*\*\*\*"/);
});

it('a program that logs its client (util.inspect, console.log, JSON) prints no credential of it, a proxy password neither', async () => {
  const client = new RouterClient({ apiKey: KEY, apiRoot: apiRoot(), headers: { 'x-portkey-api-key': GATEWAY }, proxy: { httpsProxy: 'http://bob:proxy-pass-0123456789@127.0.0.1:9' }, maxRetries: 0 });
  try {
    for (const text of [inspect(client, { depth: 10, showHidden: true }), JSON.stringify(client)]) {
      expect(text).toContain('apiRoot');
      for (const secret of [KEY, GATEWAY, 'proxy-pass-0123456789']) expect(text).not.toContain(secret);
    }
    // Still sent, as before: the server saw them.
    const sent = await client.raw.send({ method: 'GET', path: '/v1/ok' });
    expect(sent.status).toBe(200);
    expect(service.seen.at(-1)).toMatchObject({ authorization: `Bearer ${KEY}`, 'x-portkey-api-key': GATEWAY });
  } finally {
    await client.close();
  }
});
