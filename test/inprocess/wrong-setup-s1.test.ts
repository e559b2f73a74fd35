import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RouterClient, type PlainHttpInfo } from '../../src/client/index.js';
import { connectMcp } from '../../src/kit/mcp.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.js';

// Small things a user meets when something is set up wrong: a key sent unencrypted, a root from a place not named,
// a URL that answers JSON that is not MCP. The far host (router.invalid) is reached only through a real CONNECT proxy
// that tunnels to the emulator; the MCP URLs are a tiny server of this file's own.
let t: CliEnv;
let proxy: ConnectProxy;
let port: number;
let notMcp: Server;
let notMcpUrl: string;
let answer: (body: { id?: unknown; method?: string }) => unknown;

beforeAll(async () => {
  t = await startCliEnv();
  port = Number(new URL(t.apiRoot).port);
  proxy = await startConnectProxy(port);
  notMcp = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = text ? (JSON.parse(text) as { id?: unknown; method?: string }) : {};
    if (req.method === 'POST' && body.id === undefined && body.method) return void res.writeHead(202).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(body)));
  });
  await new Promise<void>((r) => notMcp.listen(0, '127.0.0.1', r));
  notMcpUrl = `http://127.0.0.1:${(notMcp.address() as { port: number }).port}/mcp`;
});
afterAll(async () => {
  await new Promise((r) => notMcp.close(r));
  await proxy.close();
  await t.close();
});
beforeEach(() => {
  answer = () => ({ status: 'ok', version: '2.1' });
});

const far = () => `http://router.invalid:${port}/api`;
const noProxy = { http_proxy: '', HTTP_PROXY: '', https_proxy: '', HTTPS_PROXY: '', no_proxy: '', NO_PROXY: '' };
const warning = (what: string) => `warning: ${what} over plain http://, unencrypted: anyone on the way can read it (use https://)\n`;

describe('a key sent over plain http:// to a host not this machine', () => {
  it('the library tells its caller once, through onPlainHttp; never for loopback, never without a key', async () => {
    const told: PlainHttpInfo[] = [];
    const client = new RouterClient({ apiKey: t.apiKey, apiRoot: far(), proxy: { httpProxy: proxy.url }, onPlainHttp: (info) => told.push(info) });
    await client.models.list();
    await client.models.list();
    expect(told).toEqual([{ host: `router.invalid:${port}` }]);
    await client.close();
    for (const apiRoot of [t.apiRoot, t.apiRoot.replace('127.0.0.1', 'localhost'), `http://127.0.0.2:${port}/api`]) {
      const local = new RouterClient({ apiKey: t.apiKey, apiRoot, maxRetries: 0, onPlainHttp: (info) => told.push(info) });
      await local.models.list().catch(() => undefined);
      await local.close();
    }
    const keyless = new RouterClient({ keyless: true, apiRoot: far(), proxy: { httpProxy: proxy.url }, onPlainHttp: (info) => told.push(info) });
    await keyless.models.list().catch(() => undefined);
    await keyless.close();
    expect(told).toHaveLength(1);
  });

  it('the CLI says it once a run on stderr, piped too, whatever the calls; not for the emulator on this machine', async () => {
    // Was: the key went unencrypted with no word. A tool loop makes two calls in one run: one warning.
    const r = await t.run(['chat', '--model', 'local/echo', 'hi'], { env: { ...noProxy, ROUTER_API_ROOT: far(), HTTP_PROXY: proxy.url } });
    expect(r).toMatchObject({ code: 0, stdout: 'hi\n', stderr: warning(`the API key goes to router.invalid:${port}`) });
    const tools = join(t.dir, 's1-tools.json');
    writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'weather', parameters: { type: 'object', properties: {} }, command: ['echo', 'sunny'] }]));
    const looped = await t.run(['chat', '--model', 'local/tools', '--tools', tools, 'weather'], { env: { ...noProxy, ROUTER_API_ROOT: far(), HTTP_PROXY: proxy.url } });
    expect(looped.code, looped.stderr).toBe(0);
    expect(looped.stderr.split('warning:')).toHaveLength(2);
    const local = await t.run(['chat', '--model', 'local/tools', '--tools', tools, 'weather']);
    expect(local).toMatchObject({ code: 0, stderr: '' });
  });

  it("an MCP server's URL with a user and password over http:// to a host not this machine: told, and said once", async () => {
    const told: PlainHttpInfo[] = [];
    await expect(connectMcp('http://ada:s3cret@mcp.invalid/mcp', { env: {}, onPlainHttp: (i) => told.push(i) })).rejects.toThrow(/MCP server http:\/\/mcp\.invalid\/mcp: could not connect/);
    expect(told).toEqual([{ host: 'mcp.invalid' }]);
    // This machine's, or one without credentials: nothing to tell.
    for (const spec of [notMcpUrl.replace('http://', 'http://ada:s3cret@'), 'http://mcp.invalid/mcp']) await connectMcp(spec, { env: {}, onPlainHttp: (i) => told.push(i) }).catch(() => undefined);
    expect(told).toHaveLength(1);
    const r = await t.run(['chat', '--model', 'local/tools', '--mcp', 'http://ada:s3cret@mcp.invalid/mcp', 'hi']);
    expect(r.code).toBe(12);
    expect(r.stderr.startsWith(warning('the user and password of MCP server mcp.invalid go'))).toBe(true);
    expect(r.stderr).not.toContain('s3cret');
  });

  it("an MCP server's URL with a token in its query over http:// to a host not this machine: told as a password is", async () => {
    const told: PlainHttpInfo[] = [];
    const tell = { env: {}, onPlainHttp: (i: PlainHttpInfo) => told.push(i) };
    for (const spec of ['http://mcp.invalid/mcp?token=t0ken-s3cret', 'http://mcp.invalid/mcp?page=2&api_key=k3y-s3cret&API_KEY=again', 'http://ada:s3cret@mcp.invalid/mcp?sig=abc']) {
      await expect(connectMcp(spec, tell)).rejects.toThrow(/could not connect/);
    }
    expect(told).toEqual([
      { host: 'mcp.invalid', inUrl: ['?token='] },
      { host: 'mcp.invalid', inUrl: ['?api_key=', '?API_KEY='] },
      { host: 'mcp.invalid', inUrl: ['password', '?sig='] },
    ]);
    // This machine's, https://, a query with no credential or an empty one: nothing to tell.
    for (const spec of [`${notMcpUrl}?token=t0ken-s3cret`, 'https://mcp.invalid/mcp?token=t0ken-s3cret', 'http://mcp.invalid/mcp?page=2&q=keys', 'http://mcp.invalid/mcp?token=']) {
      await connectMcp(spec, tell).catch(() => undefined);
    }
    expect(told).toHaveLength(3);
    const r = await t.run(['chat', '--model', 'local/tools', '--mcp', 'http://mcp.invalid/mcp?access_token=t0ken-s3cret', 'hi']);
    expect(r.code).toBe(12);
    expect(r.stderr.startsWith(warning('the credentials in the URL of MCP server mcp.invalid (?access_token=) go'))).toBe(true);
    expect(r.stderr).not.toContain('s3cret');
  });
});

it('an API root that cannot be reached is named by where it came from, --api-root too', async () => {
  // Was: named for ROUTER_API_ROOT and a profile's api_root, not for the flag.
  const r = await t.run(['--api-root', 'http://127.0.0.1:9/api', '--max-retries', '0', 'chat', '--model', 'local/echo', 'hi']);
  expect(r).toMatchObject({ code: 8, stderr: 'error: connection refused: 127.0.0.1:9, on this machine: is router serve running? (the API root from --api-root)\n' });
});

describe('a URL that answers JSON that is not MCP', () => {
  it('is one line saying what was expected, exit 12', async () => {
    // Was: the SDK's validation dump, some 150 lines of JSON.
    const r = await t.run(['chat', '--model', 'local/tools', '--mcp', notMcpUrl, 'hi']);
    expect(r).toMatchObject({ code: 12, stdout: '', stderr: `error: MCP server ${notMcpUrl}: answered JSON that is not MCP (a JSON-RPC 2.0 message was expected)\n` });
  });

  it('a JSON-RPC answer whose result is not the step of MCP asked for names the step and the field', async () => {
    const init = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'odd', version: '1' } };
    answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: b.method === 'initialize' ? { hello: 1 } : {} });
    await expect(connectMcp(notMcpUrl, { env: {} })).rejects.toThrow(new RegExp(`^MCP server ${notMcpUrl}: answered initialize with a result that is not MCP's \\(protocolVersion: expected string, received undefined; and \\d more\\)$`));
    answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: b.method === 'initialize' ? init : { tools: 'none' } });
    await expect(connectMcp(notMcpUrl, { env: {} })).rejects.toThrow(`MCP server ${notMcpUrl}: answered tools/list with a result that is not MCP's (tools: expected array, received string)`);
    answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: b.method === 'initialize' ? init : b.method === 'tools/list' ? { tools: [{ name: 'odd', inputSchema: { type: 'object' } }] } : { content: 'text' } });
    const server = await connectMcp(notMcpUrl, { env: {} });
    const result = await server.tools[0]!.run!({}, AbortSignal.timeout(10_000));
    expect(result).toEqual({ ok: false, text: "the MCP server answered tools/call with a result that is not MCP's (content: expected array, received string)" });
    await server.close();
  });
});
