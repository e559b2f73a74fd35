import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectMcp } from '../../src/kit/mcp.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// Small things a user meets when something is set up wrong: a URL that answers JSON that is not MCP (a tiny server
// of this file's own).
let t: CliEnv;
let notMcp: Server;
let notMcpUrl: string;
let answer: (body: { id?: unknown; method?: string }) => unknown;

beforeAll(async () => {
  t = await startCliEnv();
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
  await t.close();
});
beforeEach(() => {
  answer = () => ({ status: 'ok', version: '2.1' });
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
