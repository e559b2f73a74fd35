import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { deadPort } from '../support/upstreams.js';
import { running } from '../support/run-process.js';
import { EVERYTHING, everythingOverHttp } from '../support/everything-server.js';

// Tools from MCP servers (issue 44) over stdio and Streamable HTTP: servers not written here
// (server-everything, server-filesystem) and a fixture that crashes, hangs, floods and reads its environment.
// Each run starts a server (node and the SDK loaded): slow on a loaded machine, within the bound of every test.
const ROOT = resolve(import.meta.dirname, '..', '..');
const FILESYSTEM = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const FIXTURE = join(ROOT, 'test/support/mcp-fixture-server.mjs');
const node = (...args: string[]) => [process.execPath, ...args].map((a) => `'${a}'`).join(' ');

let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let apiKey: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-mcp-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const keys = emu.store.firstKeys();
  apiKey = keys.apiKey;
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: keys.managementKey, ROUTER_CONFIG_DIR: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'xdg'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_VOICE: '', ROUTER_SPEECH_MODEL: '', ROUTER_EMBED_MODEL: '' };
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });
const lastBody = (path: string) => emu.requestLog.filter((e) => e.path.endsWith(path)).at(-1)!.body as Record<string, any>;

describe('--mcp over stdio', () => {
  it('server-everything: chat answers from its echo tool', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--mcp', node(EVERYTHING, 'stdio'), 'please echo this']);
    expect(r.stderr).toBe('');
    expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
    const names = (lastBody('/chat/completions').tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(names).toContain('get-env');
  });

  it('responses runs the tool in a loop too, in the Responses tool format', async () => {
    const r = await run(['responses', '--model', 'local/tools', '--mcp', node(EVERYTHING, 'stdio'), 'please echo this']);
    expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
    const body = lastBody('/responses');
    expect(body.tools[0]).toMatchObject({ type: 'function', name: expect.any(String), parameters: expect.any(Object) });
    expect(body.input.at(-1)).toMatchObject({ type: 'function_call_output', output: 'Echo: please echo this' });
  });

  it('the server asks for its environment: it holds none of router\'s keys, even copied into another variable', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--mcp', node(EVERYTHING, 'stdio'), 'get-env'], { env: { MY_COPY: `x${apiKey}` } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/get-env answered: \{/);
    expect(r.stdout).toMatch(/"PATH"/);
    expect(r.stdout).not.toContain(apiKey);
    expect(r.stdout).not.toMatch(/ROUTER_API_KEY|ROUTER_MANAGEMENT_KEY|MY_COPY/);
    const fixture = await run(['chat', '--model', 'local/tools', '--mcp', node(FIXTURE, 'env'), 'env'], { env: { MY_COPY: apiKey } });
    expect(fixture.stdout).toMatch(/env answered: \{/);
    expect(fixture.stdout).not.toContain(apiKey);
    expect(fixture.stdout).not.toContain(env.ROUTER_MANAGEMENT_KEY);
  });

  it('server-filesystem: reads a file of the folder it was given', async () => {
    const files = join(dir, 'files');
    // The prompt is the path (local/tools puts it in the tool's string parameter), and names the tool.
    mkdirSync(join(files, 'list_directory'), { recursive: true });
    writeFileSync(join(files, 'list_directory', 'note.txt'), 'the contents\n');
    const r = await run(['chat', '--model', 'local/tools', '--mcp', node(FILESYSTEM, files), join(files, 'list_directory')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('From the tool results: list_directory answered: [FILE] note.txt\n');
  });

  it('server-filesystem: its first tool called with the path alone, no optional argument invented', async () => {
    const files = join(dir, 'plain-files');
    mkdirSync(files, { recursive: true });
    writeFileSync(join(files, 'plan.txt'), 'secret plan\n');
    // The prompt names no tool: the first, read_file, whose optional head and tail exclude each other (both filled, every call failed).
    const read = await run(['chat', '--model', 'local/tools', '--mcp', node(FILESYSTEM, files), join(files, 'plan.txt')]);
    expect(read).toMatchObject({ code: 0, stdout: 'From the tool results: read_file answered: secret plan\n', stderr: '' });
    const call = lastBody('/chat/completions').messages.find((m: { tool_calls?: unknown }) => m.tool_calls).tool_calls[0];
    expect(JSON.parse(call.function.arguments)).toEqual({ path: join(files, 'plan.txt') });
  });

  it('server-filesystem: a prompt naming the tool and a file gives the file alone as the path', async () => {
    const files = join(dir, 'named-files');
    mkdirSync(files, { recursive: true });
    writeFileSync(join(files, 'plan.txt'), 'the plan\n');
    // Was: the path "read_text_file <path>." (the whole prompt), no such file.
    for (const prompt of [`read_text_file ${join(files, 'plan.txt')}.`, `please read_text_file "${join(files, 'plan.txt')}"`]) {
      const r = await run(['chat', '--model', 'local/tools', '--mcp', node(FILESYSTEM, files), prompt]);
      expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: read_text_file answered: the plan\n', stderr: '' });
      const call = lastBody('/chat/completions').messages.find((m: { tool_calls?: unknown }) => m.tool_calls).tool_calls[0];
      expect(JSON.parse(call.function.arguments)).toEqual({ path: join(files, 'plan.txt') });
    }
  });

  it('names two servers share are prefixed by the server', async () => {
    const r = await run(['chat', '--dry-run', '--model', 'local/tools', '--mcp', node(EVERYTHING, 'stdio'), '--mcp', node(FIXTURE, 'env'), '--mcp', node(FIXTURE, 'env', join(dir, 'second')), 'hi']);
    expect(r.code).toBe(0);
    const names = [...r.stdout.matchAll(/"name": "([^"]+)"/g)].map((m) => m[1]);
    expect(names).toEqual(expect.arrayContaining(['echo', 'fixture-env_env', 'fixture-env2_env']));
  });

  it('a server that crashes during a call: one line, exit 12', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--mcp', node(FIXTURE, 'crash'), 'crash']);
    expect(r).toMatchObject({ code: 12, stdout: '', stderr: 'error: MCP server fixture-crash ended during a call of crash\n' });
  });

  it('a server that hangs in a call and ignores SIGTERM: ended at --tool-timeout, exit 12, its process gone', async () => {
    const pidFile = join(dir, 'hang.pid');
    const r = await run(['chat', '--model', 'local/tools', '--tool-timeout', '1', '--mcp', node(FIXTURE, 'hang', pidFile), 'hang']);
    expect(r).toMatchObject({ code: 12, stderr: 'error: MCP server fixture-hang did not answer a call of hang in time (--tool-timeout 1s)\n' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await until(() => !running(pid))).toBe(true);
  });

  it('a server that never answers at start, or a command not found: one line, exit 12, nothing sent', async () => {
    const before = emu.requestLog.length;
    const pidFile = join(dir, 'silent.pid');
    const silent = await run(['chat', '--model', 'local/tools', '--tool-timeout', '1', '--mcp', node(FIXTURE, 'silent', pidFile), 'hi']);
    expect(silent.code).toBe(12);
    expect(silent.stderr).toMatch(/^error: MCP server .*fixture-server\.mjs' 'silent' .*: did not answer within 30 s\n$/);
    const missing = await run(['chat', '--model', 'local/tools', '--mcp', 'no-such-mcp-server-here --flag', 'hi']);
    expect(missing).toMatchObject({ code: 12, stderr: 'error: MCP server no-such-mcp-server-here --flag: could not start: the command was not found (install it, or give its full path)\n' });
    expect(emu.requestLog.slice(before).filter((e) => e.path.endsWith('/chat/completions'))).toEqual([]);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await until(() => !running(pid))).toBe(true);
  });

  it('an image result: not passed on to a model that takes no image input, and said', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--mcp', node(EVERYTHING, 'stdio'), 'get-tiny-image']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('warning: 1 image from the tools not passed on: the model takes no image input\n');
    expect(r.stdout).toMatch(/^From the tool results: get-tiny-image answered: .*\[image image\/png\]/s);
    expect(r.stdout).toMatch(/\[router: 1 image from the tools not passed on: the model takes no image input\]\n$/);
  });

  it('a result past the 10 MiB the SDK\'s transport takes in one message (it ended the server: exit 12) is cut at 1 MiB as any other', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--mcp', node(FIXTURE, 'flood-20'), 'flood-20']);
    expect(r.stderr).toBe('warning: tool flood-20: its result was cut: the model got the first 1,048,576 bytes of 20,971,520\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^From the tool results: flood-20 answered: x{1000}.*\[router: the result was cut at 1 MiB of 20971520 bytes\]\n$/s);
  });

  it('a server that floods: its result cut at 1 MiB with a line saying so', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--mcp', node(FIXTURE, 'flood'), 'flood']);
    expect(r.code).toBe(0);
    // local/tools answers with the result it was sent.
    expect(r.stdout.length).toBeLessThan(1024 * 1024 + 200);
    expect(r.stdout).toMatch(/^From the tool results: flood answered: x{1000}.*\[router: the result was cut at 1 MiB of 5242880 bytes\]\n$/s);
  });
});

describe('--mcp over Streamable HTTP', () => {
  let server: ChildProcess;
  let url: string;
  beforeAll(async () => {
    const everything = await everythingOverHttp('streamableHttp');
    server = everything.server;
    url = `${everything.origin}/mcp`;
  });
  afterAll(() => {
    server.kill();
  });

  it('server-everything: chat answers from its echo tool', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--mcp', url, 'please echo this']);
    expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
  });

  it('a user and password in the URL go as Basic authorization; neither they nor a query token are ever shown', async () => {
    const seen: (string | undefined)[] = [];
    const refusing = createHttpServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"no"}');
    });
    await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
    const port = (refusing.address() as { port: number }).port;
    try {
      const r = await run(['chat', '--model', 'local/tools', '--mcp', `http://me:pw%23mcp-secret@127.0.0.1:${port}/mcp?token=tok-mcp-secret`, 'hi']);
      expect(r.code).toBe(12);
      // Was: "could not start: Streamable HTTP error: Error POSTing to endpoint: {"error":"no"}".
      expect(r.stderr).toBe(`error: MCP server http://127.0.0.1:${port}/mcp?…: answered HTTP 401 (no): it wants authorization (a user and password in the URL go as Basic)\n`);
      expect(r.stdout + r.stderr).not.toMatch(/mcp-secret/);
      expect(seen[0]).toBe(`Basic ${Buffer.from('me:pw#mcp-secret').toString('base64')}`);
    } finally {
      refusing.close();
    }
  });

  it("a server that echoes the request in its refusal: the URL's password (as Basic too) and query values are hidden in its words", async () => {
    // Was: "(refused Basic bWU6… at /mcp?token=tok-echoed-secret-1)": the Basic credential and the token, as the server echoed them.
    const echoing = createHttpServer((req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `refused ${req.headers.authorization} at ${req.url}` })));
    await new Promise<void>((r) => echoing.listen(0, '127.0.0.1', r));
    const port = (echoing.address() as { port: number }).port;
    try {
      const r = await run(['chat', '--model', 'local/tools', '--mcp', `http://me:pw-echoed-secret-2@127.0.0.1:${port}/mcp?token=tok-echoed-secret-1&q=a%20echoed-secret-3`, 'hi']);
      expect(r.code).toBe(12);
      expect(r.stderr).toBe(`error: MCP server http://127.0.0.1:${port}/mcp?…: answered HTTP 401 (refused Basic **** at /mcp?token=****&q=****): it wants authorization (a user and password in the URL go as Basic)\n`);
    } finally {
      echoing.close();
    }
  });

  it('a URL where no server listens: one line, exit 12', async () => {
    // Not a port of a server opened and closed here: another file's server could be given it and answer.
    const port = await deadPort();
    const r = await run(['chat', '--model', 'local/tools', '--mcp', `http://127.0.0.1:${port}/mcp`, 'hi']);
    expect(r.code).toBe(12);
    // Was: "could not start: fetch failed (ECONNREFUSED)": a URL's server is not started by router.
    expect(r.stderr).toBe(`error: MCP server http://127.0.0.1:${port}/mcp: could not connect: nothing listens there (connection refused)\n`);
    // Was: "could not start: fetch failed (bad port)".
    const blocked = await run(['chat', '--model', 'local/tools', '--mcp', 'http://127.0.0.1:9/mcp', 'hi']);
    expect(blocked).toMatchObject({ code: 12, stderr: 'error: MCP server http://127.0.0.1:9/mcp: could not connect: fetch never connects to port 9 (a port the fetch standard blocks)\n' });
  });

  it('a URL where an HTTP server that is no MCP server answers: its status and message, one line, exit 12', async () => {
    const origin = new URL(env.ROUTER_API_ROOT!).origin;
    const r = await run(['chat', '--model', 'local/tools', '--mcp', `${origin}/api/v1/models`, 'hi']);
    // Was: "could not start: Streamable HTTP error: Error POSTing to endpoint: {"error":{"code":405,…}}" (the whole body).
    expect(r).toMatchObject({ code: 12, stdout: '', stderr: `error: MCP server ${origin}/api/v1/models: answered HTTP 405 (Method POST not allowed on /v1/models): no MCP server answers at this URL (its endpoint is often …/mcp, or …/sse)\n` });
    const at = await run(['chat', '--model', 'local/tools', '--mcp', `${origin}/mcp`, 'hi']);
    expect(at.stderr).toMatch(/^error: MCP server .+\/mcp: answered HTTP 404 \(Not found: \/mcp; .+\): no MCP server answers at this URL\n$/);
  });
});
