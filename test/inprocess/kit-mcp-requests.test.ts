import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { McpRequestRefused, modelSampler, runPrompt, serviceListPrices, SpendGuard, ToolSet, toolEnv, type ToolProgress } from '../../src/kit/index.js';

// What MCP servers ask of the library (roots, sampling, elicitation) and the progress a prompt's caller is told,
// against the reference servers (server-everything, server-filesystem) and the emulator over real HTTP.
const ROOT = resolve(import.meta.dirname, '..', '..');
const EVERYTHING = `'${process.execPath}' '${join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js')}' stdio`;
const FILESYSTEM = `'${process.execPath}' '${join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js')}'`;

let emu: Emulator;
let dir: string;
let client: RouterClient;
let apiKey: string;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'router-kit-mcp-')));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  apiKey = emu.store.firstKeys().apiKey;
  client = new RouterClient({ apiKey, apiRoot: emu.apiRoot });
});
afterAll(async () => {
  await client.close();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const text = (r: { text: string } | string) => (typeof r === 'string' ? r : r.text);
const run = async (set: ToolSet, name: string, args: Record<string, unknown> = {}, progress?: (u: ToolProgress) => void) => text(await set.tools.get(name)!.run(args, new AbortController().signal, { arguments: JSON.stringify(args), progress }));

describe('roots', () => {
  it('server-filesystem started with no folder works in the roots given, and only there', async () => {
    const files = join(dir, 'files');
    mkdirSync(files, { recursive: true });
    writeFileSync(join(files, 'note.txt'), 'rooted\n');
    const set = await ToolSet.open({ mcp: [FILESYSTEM], env: toolEnv(process.env), roots: [files] });
    try {
      // server-filesystem asks for the roots after `initialized` and applies them when answered, on its own time.
      let allowed = await run(set, 'list_allowed_directories');
      for (let i = 0; i < 100 && allowed === 'Allowed directories:\n'; i++) allowed = await new Promise((r) => setTimeout(r, 100)).then(() => run(set, 'list_allowed_directories'));
      expect(allowed).toBe(`Allowed directories:\n${files}`);
      expect(await run(set, 'read_text_file', { path: join(files, 'note.txt') })).toBe('rooted\n');
      expect(await run(set, 'read_text_file', { path: join(dir, 'state') })).toMatch(/Access denied/);
    } finally {
      await set.close();
    }
  });

  it('without roots none are offered: server-everything has no get-roots-list, server-filesystem keeps its folders', async () => {
    const set = await ToolSet.open({ mcp: [EVERYTHING, `${FILESYSTEM} '${dir}'`], env: toolEnv(process.env) });
    try {
      expect([...set.tools.keys()]).not.toContain('get-roots-list');
      expect(await run(set, 'list_allowed_directories')).toBe(`Allowed directories:\n${dir}`);
    } finally {
      await set.close();
    }
    const rooted = await ToolSet.open({ mcp: [EVERYTHING], env: toolEnv(process.env), roots: [dir, '.'] });
    try {
      expect(await run(rooted, 'get-roots-list')).toContain(`file://${dir}`);
    } finally {
      await rooted.close();
    }
  });
});

describe('sampling', () => {
  it("server-everything's sampling request answered by a model through the client, counted by the spend guard", async () => {
    const guard = new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: join(dir, 'spend') }, maxCost: 1 });
    const set = await ToolSet.open({ mcp: [EVERYTHING], env: toolEnv(process.env), sample: modelSampler(client, 'local/echo', { guard }) });
    try {
      const out = await run(set, 'trigger-sampling-request', { prompt: 'sampled words', maxTokens: 50 });
      expect(out).toMatch(/LLM sampling result:/);
      expect(out).toContain('sampled words');
      expect(out).toMatch(/"model": "local\/echo"/);
      const sent = emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).at(-1)!.body as Record<string, any>;
      expect(sent).toMatchObject({ model: 'local/echo', max_completion_tokens: 50, messages: [{ role: 'system', content: 'You are a helpful test server.' }, { role: 'user', content: expect.stringContaining('sampled words') }] });
      expect(guard.spent).toBeGreaterThan(0);
      expect(JSON.stringify(sent)).not.toContain(apiKey);
    } finally {
      guard.release();
      await set.close();
    }
  });

  it('a refusal reaches the server as an MCP error with its words; without a sampler the tool is not offered', async () => {
    const set = await ToolSet.open({ mcp: [EVERYTHING], env: toolEnv(process.env), sample: async () => Promise.reject(new McpRequestRefused('not now')) });
    try {
      // The words go as the JSON-RPC error's message: the server's SDK names the code itself, once.
      await expect(run(set, 'trigger-sampling-request', { prompt: 'x', maxTokens: 5 })).resolves.toMatch(/(?<!MCP error -32600: )MCP error -32600: not now/);
    } finally {
      await set.close();
    }
    // Past the guard's cap: not sent, and the server is told why.
    const guard = new SpendGuard({ prices: serviceListPrices(client), env: { ROUTER_STATE_DIR: join(dir, 'spend') }, maxCost: 1e-9 });
    const sent = emu.requestLog.length;
    const capped = await ToolSet.open({ mcp: [EVERYTHING], env: toolEnv(process.env), sample: modelSampler(client, 'local/echo', { guard }) });
    try {
      const said = await run(capped, 'trigger-sampling-request', { prompt: 'x', maxTokens: 5 });
      expect(said).toMatch(/over maxCost \$0.000000001/);
      expect(said).not.toMatch(/MCP error -?\d+: MCP error/);
      expect(emu.requestLog.slice(sent).filter((e) => e.path.endsWith('/chat/completions'))).toEqual([]);
    } finally {
      await capped.close();
    }
    const plain = await ToolSet.open({ mcp: [EVERYTHING], env: toolEnv(process.env) });
    await plain.close();
    expect([...plain.tools.keys()]).not.toContain('trigger-sampling-request');
    expect([...plain.tools.keys()]).not.toContain('trigger-elicitation-request');
  });
});

describe('elicitation', () => {
  it("server-everything's form is answered by the caller's elicit, and the server reads the answer", async () => {
    const asked: { message: string; fields: string[] }[] = [];
    const set = await ToolSet.open({
      mcp: [EVERYTHING],
      env: toolEnv(process.env),
      elicit: async (req) => {
        asked.push({ message: req.message, fields: Object.keys(req.requestedSchema.properties) });
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 7 } };
      },
    });
    try {
      const out = await run(set, 'trigger-elicitation-request');
      expect(asked[0]).toMatchObject({ message: 'Please provide inputs for the following fields:', fields: expect.arrayContaining(['name', 'check', 'integer']) });
      expect(out).toContain('Ada Lovelace');
      expect(out).toMatch(/accept/);
    } finally {
      await set.close();
    }
  });
});

describe("prompt()'s progress", () => {
  it("a long MCP call's progress notifications reach onToolProgress, the last step too", async () => {
    const set = await ToolSet.open({ mcp: [EVERYTHING], env: toolEnv(process.env) });
    try {
      const long = set.tools.get('trigger-long-running-operation')!;
      // The model (local/tools) picks numbers of its own: the call's are fixed here, a short run of 3 steps.
      const slow = { ...long, name: 'slow', run: (_args: Record<string, unknown>, signal: AbortSignal, call?: Parameters<typeof long.run>[2]) => long.run({ duration: 0.3, steps: 3 }, signal, call) };
      const seen: { name: string; update: ToolProgress }[] = [];
      const r = await runPrompt(client, 'local/tools', [], 'slow', { tools: [slow], onToolProgress: (call, update) => seen.push({ name: call.name, update }) });
      expect(r.text).toMatch(/slow answered: Long running operation completed/);
      expect(seen.map((s) => s.update.progress)).toEqual([1, 2, 3]);
      expect(seen[2]).toMatchObject({ name: 'slow', update: { progress: 3, total: 3 } });
    } finally {
      await set.close();
    }
  });
});
