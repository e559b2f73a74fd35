import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runInProcess } from '../support/inprocess.js';
import { everythingOverHttp } from '../support/everything-server.js';

// --mcp URL of a server of the older HTTP+SSE transport (MCP 2024-11-05), as many deployed servers still are:
// server-everything's `sse` mode (GET /sse, POST /message), not written here.

let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let server: ChildProcess;
let origin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-mcp-sse-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const keys = emu.store.firstKeys();
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: keys.apiKey, ROUTER_CONFIG_DIR: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'xdg'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_MCP: '' };
  ({ server, origin } = await everythingOverHttp('sse'));
});
afterAll(async () => {
  server.kill();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[]) => runInProcess(args, { env });

it('a URL of an HTTP+SSE server: its POST answered 404, router opens the SSE stream and calls its tools', async () => {
  // Was: "error: MCP server …/sse: answered HTTP 404 (… Cannot POST …): no MCP server answers at this URL", exit 12.
  const r = await run(['chat', '--model', 'local/tools', '--mcp', `${origin}/sse`, 'please echo this']);
  expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
  const sent = emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).at(-1)!.body as { tools: { function: { name: string } }[] };
  expect(sent.tools.map((t) => t.function.name)).toContain('get-sum');
});

it('the same server at a URL where neither transport answers: the POST\'s status, with both usual endpoints named', async () => {
  const r = await run(['chat', '--model', 'local/tools', '--mcp', `${origin}/`, 'hi']);
  expect(r.code).toBe(12);
  expect(r.stderr).toMatch(new RegExp(`^error: MCP server ${origin}/: answered HTTP 404 \\(.*\\): no MCP server answers at this URL \\(its endpoint is often …/mcp, or …/sse\\)\\n$`));
});
