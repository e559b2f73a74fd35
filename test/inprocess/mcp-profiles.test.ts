import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';

// MCP servers kept in a profile (`router config set mcp …`) and in ROUTER_MCP: the environment goes
// before the profile, --mcp before both (issue 44). Over server-everything, a server not written here.
const ROOT = resolve(import.meta.dirname, '..', '..');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FIXTURE = join(ROOT, 'test/support/mcp-fixture-server.mjs');
const node = (...args: string[]) => [process.execPath, ...args].map((a) => `'${a}'`).join(' ');

let emu: Emulator;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-mcp-profile-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const keys = emu.store.firstKeys();
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: keys.apiKey, ROUTER_MANAGEMENT_KEY: keys.managementKey, ROUTER_CONFIG_DIR: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'xdg'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_MCP: '' };
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });
const toolNames = () => ((emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).at(-1)!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);

describe('mcp in a profile and in ROUTER_MCP', () => {
  beforeEach(async () => {
    expect((await run(['config', 'set', 'mcp', node(EVERYTHING, 'stdio')])).code).toBe(0);
  });

  it('router config set mcp: chat and responses answer from the profile server\'s tools', async () => {
    const stored = JSON.parse(readFileSync(join(dir, 'config', 'config.json'), 'utf8')) as { profiles: Record<string, { mcp?: string }> };
    expect(stored.profiles.default!.mcp).toBe(node(EVERYTHING, 'stdio'));
    const chat = await run(['chat', '--model', 'local/tools', 'please echo this']);
    expect(chat).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
    expect(toolNames()).toContain('get-env');
    const responses = await run(['responses', '--model', 'local/tools', 'please echo this']);
    expect(responses).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
  });

  it('a flag that goes with --mcp is taken when the profile holds the servers', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--max-tool-rounds', '2', 'please echo this']);
    expect(r).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
    expect(await run(['roles', 'save', 'plain', '--system', 'Be brief.', '--model', 'local/tools'])).toMatchObject({ code: 0, stderr: '' });
    const role = await run(['chat', '--role', 'plain', '--max-tool-rounds', '2', 'please echo this']);
    expect(role).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
    await run(['config', 'unset', 'mcp']);
    const without = await run(['chat', '--model', 'local/tools', '--max-tool-rounds', '2', 'please echo this']);
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(/--max-tool-rounds goes with --tools or --mcp/);
  });

  it('ROUTER_MCP goes before the profile, --mcp before both; several servers are one a line', async () => {
    const fromEnv = await run(['chat', '--model', 'local/tools', 'env'], { env: { ROUTER_MCP: node(FIXTURE, 'env') } });
    expect(fromEnv.code).toBe(0);
    expect(toolNames()).toEqual(['env']);
    const flag = await run(['chat', '--model', 'local/tools', '--mcp', node(FIXTURE, 'env'), 'please echo this'], { env: { ROUTER_MCP: node(EVERYTHING, 'stdio') } });
    expect(flag.code).toBe(0);
    expect(toolNames()).toEqual(['env']);
    expect((await run(['config', 'set', 'mcp', `${node(EVERYTHING, 'stdio')}\n${node(FIXTURE, 'env')}\n`])).code).toBe(0);
    const both = await run(['chat', '--model', 'local/tools', 'please echo this']);
    expect(both).toMatchObject({ code: 0, stdout: 'From the tool results: echo answered: Echo: please echo this\n' });
    expect(toolNames()).toEqual(expect.arrayContaining(['echo', 'get-env', 'env']));
  });

  it('a role\'s mcp goes before ROUTER_MCP and the profile\'s, as a typed --mcp does', async () => {
    expect(await run(['roles', 'save', 'envtool', '--system', 'Use the tools.', '--model', 'local/tools', '--mcp', node(FIXTURE, 'env')])).toMatchObject({ code: 0, stderr: '' });
    const r = await run(['chat', '--role', 'envtool', 'please echo this'], { env: { ROUTER_MCP: node(EVERYTHING, 'stdio') } });
    expect(r.code).toBe(0);
    expect(toolNames()).toEqual(['env']);
  });

  it('chat --schema takes no tools: the profile\'s servers are left out, and said', async () => {
    const r = await run(['chat', '--model', 'local/lorem', '--schema', '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}', 'a city'], { env: { ROUTER_MCP: '' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^note: --schema takes no tools: the MCP servers of mcp of profile "default" are left out$/m);
    expect(toolNames()).toEqual([]);
  });
  it('a server of the profile or ROUTER_MCP that does not start is said with where it is set and how to leave it out', async () => {
    expect((await run(['config', 'set', 'mcp', 'no-such-mcp-server-here --stdio'])).code).toBe(0);
    const fromProfile = 'error: MCP server no-such-mcp-server-here --stdio: could not start: the command was not found (install it, or give its full path); it is in the mcp of profile "default" (router config unset mcp leaves it out; --mcp gives servers in its place)\n';
    for (const command of ['chat', 'responses']) expect(await run([command, '--model', 'local/tools', 'hi'])).toMatchObject({ code: 12, stdout: '', stderr: fromProfile });
    const fromEnv = await run(['chat', '--model', 'local/tools', 'hi'], { env: { ROUTER_MCP: 'no-such-mcp-server-here --env' } });
    expect(fromEnv).toMatchObject({ code: 12, stderr: 'error: MCP server no-such-mcp-server-here --env: could not start: the command was not found (install it, or give its full path); it is in ROUTER_MCP (unset it to leave it out; --mcp gives servers in its place)\n' });
    // Typed, the server is the user's own word: nothing to add.
    const typed = await run(['chat', '--model', 'local/tools', '--mcp', 'no-such-mcp-server-here --typed', 'hi']);
    expect(typed).toMatchObject({ code: 12, stderr: 'error: MCP server no-such-mcp-server-here --typed: could not start: the command was not found (install it, or give its full path)\n' });
  });
});
