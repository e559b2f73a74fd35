import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';

// What MCP servers ask of `router chat` (roots, sampling, elicitation), off a terminal, against the reference
// servers (server-everything, server-filesystem) and the emulator over real HTTP.
const ROOT = resolve(import.meta.dirname, '..', '..');
const node = (...args: string[]) => [process.execPath, ...args].map((a) => `'${a}'`).join(' ');
const EVERYTHING = node(join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio');
const FILESYSTEM = node(join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'));
// local/tools fills the tool's maxTokens ({type: number, default: 100}) with its default: the SDK takes only integers there.
const SAMPLE = 'trigger-sampling-request please';

let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let apiKey: string;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'router-mcp-asks-')));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const keys = emu.store.firstKeys();
  apiKey = keys.apiKey;
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: keys.managementKey, ROUTER_CONFIG_DIR: join(dir, 'config'), XDG_STATE_HOME: join(dir, 'xdg'), ROUTER_STATE_DIR: join(dir, 'cli-state'), ROUTER_PROFILE: '', ROUTER_MODEL: '' };
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });
const chats = () => emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).map((e) => e.body as Record<string, any>);
/** The requests a server's sampling made: its own system prompt first. */
const sampled = () => chats().filter((b) => b.messages[0]?.content === 'You are a helpful test server.');

describe("a server's sampling request", () => {
  it('piped without --mcp-sampling: refused with an MCP error the model reads, a line on stderr, nothing sent for it', async () => {
    const before = sampled().length;
    const r = await run(['chat', '--model', 'local/tools', '--mcp', EVERYTHING, SAMPLE]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^From the tool results: trigger-sampling-request answered: MCP error -32600: router refused: --mcp-sampling allows it; a pipe cannot ask\n$/);
    expect(r.stderr).toContain('warning: MCP server mcp-servers/everything asked for a model\'s answer (sampling): refused (--mcp-sampling allows it; a pipe cannot ask)\n');
    expect(sampled().length).toBe(before);
  });

  it('with --mcp-sampling: answered by the command\'s model, traced on stderr, its cost in the ledger; no key in what the server gets', async () => {
    const calls = async () => JSON.parse((await run(['usage', '--json'])).stdout).total.calls as number;
    const before = await calls();
    const r = await run(['chat', '--model', 'local/tools', '--mcp', EVERYTHING, '--mcp-sampling', '--verbose', SAMPLE]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"text": "Resource trigger-sampling-request context: trigger-sampling-request please"');
    expect(r.stdout).toContain('"model": "local/tools"');
    expect(r.stdout + r.stderr).not.toContain(apiKey);
    expect(r.stderr).toMatch(/^sampling for mcp-servers\/everything: Resource trigger-sampling-request context:.* -> local\/tools, \d+ tokens?$/m);
    expect(sampled()).toHaveLength(1);
    expect(sampled()[0]).toMatchObject({ model: 'local/tools', max_completion_tokens: 100, messages: [{ role: 'system' }, { role: 'user', content: `Resource trigger-sampling-request context: ${SAMPLE}` }] });
    // The ledger: the two rounds of the chat and the sampling call between them.
    expect((await calls()) - before).toBe(3);
  });

  it("the sampling trace cuts the server's words at a word's end: no start of a key is left before its …", async () => {
    // The trace's 60 characters ended 14 characters into the management key (old: "context: ab sk-rt-mgmt-…", under the 16 hidden anywhere);
    // since the tool's arguments are given with keys hidden, the server never has the key to echo.
    const r = await run(['chat', '--model', 'local/tools', '--mcp', EVERYTHING, '--mcp-sampling', '--verbose', `ab ${env.ROUTER_MANAGEMENT_KEY} trigger-sampling-request`]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^sampling for mcp-servers\/everything: Resource trigger-sampling-request context: ab \*\*\*\*… -> local\/tools/m);
    expect(r.stdout + r.stderr).not.toContain(env.ROUTER_MANAGEMENT_KEY!.slice(0, 12));
  });
});

describe("a server's elicitation, piped", () => {
  it('declined, and said on stderr', async () => {
    const r = await run(['chat', '--model', 'local/tools', '--mcp', EVERYTHING, 'trigger-elicitation-request']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^From the tool results: trigger-elicitation-request answered: .*declined/);
    expect(r.stderr).toBe('note: MCP server mcp-servers/everything asked for input ("Please provide inputs for the following fields:"): declined (no terminal to ask on)\n');
  });
});

describe('--mcp-root', () => {
  it('server-filesystem started with no folder works in the roots given', async () => {
    const files = join(dir, 'files');
    mkdirSync(join(files, 'list_directory'), { recursive: true });
    writeFileSync(join(files, 'list_directory', 'note.txt'), 'x');
    // server-filesystem takes the roots after it is initialized, asking for them and then checking each folder, while the
    // client goes on (its own race: a call that comes first finds none; CI saw it once under load): asked a few times.
    const answered = async (args: string[], expected: string) => {
      let r = await run(args);
      for (let i = 1; i < 4 && r.stdout !== expected; i++) r = await run(args);
      expect(r).toMatchObject({ code: 0, stdout: expected });
    };
    await answered(['chat', '--model', 'local/tools', '--mcp', FILESYSTEM, '--mcp-root', files, join(files, 'list_directory')], 'From the tool results: list_directory answered: [FILE] note.txt\n');
    const both = ['--mcp-root', files, '--mcp-root', join(dir, 'state')];
    await answered(['chat', '--model', 'local/tools', '--mcp', FILESYSTEM, ...both, 'list_allowed_directories'], `From the tool results: list_allowed_directories answered: Allowed directories:\n${files}\n${join(dir, 'state')}\n`);
    // Without roots (before: always) it has no folder to work in.
    expect((await run(['chat', '--model', 'local/tools', '--mcp', FILESYSTEM, join(files, 'list_directory')])).stdout).toMatch(/Access denied/);
  });

  it('a root that is no folder: refused before anything is sent (exit 2); without --mcp it is refused too', async () => {
    const sent = chats().length;
    expect(await run(['chat', '--model', 'local/tools', '--mcp', EVERYTHING, '--mcp-root', join(dir, 'nothing-here'), 'hi'])).toMatchObject({ code: 2, stderr: `error: --mcp-root ${join(dir, 'nothing-here')}: not a folder\n` });
    expect((await run(['chat', '--model', 'local/tools', '--mcp-root', dir, 'hi'])).stderr).toBe('error: --mcp-root goes with --mcp\n');
    expect(chats().length).toBe(sent);
  });
});

describe('--usage with a server that sampled', () => {
  it("sums the chat's rounds and the sampling call, and says the sampling part: as the ledger has them", async () => {
    const ledger = async () => JSON.parse((await run(['usage', '--json'])).stdout).total as Record<string, number>;
    const before = await ledger();
    const r = await run(['chat', '--model', 'local/tools', '--mcp', EVERYTHING, '--mcp-sampling', '--usage', 'trigger-sampling-request, briefly']);
    expect(r.code).toBe(0);
    const after = await ledger();
    const [, prompt, completion, total, cost] = /^usage: (\d+) prompt \+ (\d+) completion = (\d+) tokens, cost \$([\d.]+) \(of which MCP sampling: \d+ prompt \+ \d+ completion = \d+ tokens?, cost \$[\d.]+\)$/m.exec(r.stderr) ?? [];
    expect(after.calls - before.calls).toBe(3);
    expect([Number(prompt), Number(completion), Number(total)]).toEqual([after.prompt_tokens - before.prompt_tokens, after.completion_tokens - before.completion_tokens, after.total_tokens - before.total_tokens]);
    expect(Number(cost)).toBeCloseTo(after.cost - before.cost, 9);
  });
});
