import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { expect, it } from 'vitest';
import { RouterClient, ValidationError } from '../../src/client/index.js';
import type { Emulator } from '../../src/emulator/server.js';
import { SchemaError, ToolSourceError, budgetLimits, chatModel, commandTool, ResultBudget, pricesFrom, runToolCall, serviceListPrices, SpendError, SpendGuard, ToolSet } from '../../src/kit/index.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// Session 79: a program's first hour with the library, from the installed tarball.
const FIXTURE = resolve(import.meta.dirname, '..', 'support', 'mcp-fixture-server.mjs');
let emu: Emulator;

emulatorPerFile('router-libuser-79-', (f) => ({ emu } = f));

it("an MCP server given the program's own environment, keys and all, starts without any client's key", async () => {
  const mine = emu.store.firstKeys().apiKey;
  const theirs = 'sk-rt-v1-the-other-clients-key-0123456789';
  const a = new RouterClient({ apiKey: mine, apiRoot: emu.apiRoot });
  const b = new RouterClient({ apiKey: theirs, apiRoot: 'http://127.0.0.1:9/api' });
  // As a JavaScript program writes it: its whole environment, with router's variable and a copy of its own.
  const env = { PATH: process.env.PATH!, ROUTER_API_KEY: mine, MY_COPY: theirs, KEPT: 'yes' };
  const tools = await ToolSet.open({ mcp: [`'${process.execPath}' '${FIXTURE}' env`], env });
  try {
    const result = await runToolCall(tools.tools, { id: '1', name: 'env', arguments: '{}' }, { signal: AbortSignal.timeout(30_000), timeoutMs: 30_000, budget: new ResultBudget() });
    const seen = JSON.parse(result.text) as Record<string, string>;
    // Was ROUTER_API_KEY and MY_COPY as given: a command tool leaves them out, the server got them.
    expect(seen.KEPT).toBe('yes');
    expect(result.text).not.toContain(mine);
    expect(result.text).not.toContain(theirs);
    expect(seen).not.toHaveProperty('ROUTER_API_KEY');
  } finally {
    await tools.close();
    await Promise.all([a.close(), b.close()]);
  }
});

it("a command tool run outside a prompt (runToolCall) is given no client's key either", async () => {
  const mine = emu.store.firstKeys().apiKey;
  const a = new RouterClient({ apiKey: mine, apiRoot: emu.apiRoot });
  const dump = commandTool({ name: 'envdump', parameters: { type: 'object', properties: {} } }, ['sh', '-c', 'env | sort'], { PATH: process.env.PATH!, ROUTER_API_KEY: mine, MY_COPY: mine });
  try {
    const result = await runToolCall(new Map([['envdump', dump]]), { id: '1', name: 'envdump', arguments: '{}' }, { signal: AbortSignal.timeout(30_000), timeoutMs: 30_000, budget: new ResultBudget() });
    expect(result.status).toBe('ok');
    // Was ROUTER_API_KEY=… and MY_COPY=…: only a prompt's loop left the keys out.
    expect(result.text).toContain('PATH=');
    expect(result.text).not.toContain(mine);
  } finally {
    await a.close();
  }
});

it('a model, a conversation, a guard or a tool set a program logs prints none of the environment it was given', async () => {
  const secret = 'aws-secret-the-program-keeps-0123456789';
  const dir = mkdtempSync(join(tmpdir(), 'router-libuser-79-log-'));
  const env = { PATH: process.env.PATH!, ROUTER_STATE_DIR: dir, ROUTER_CONFIG_DIR: dir, AWS_SECRET_ACCESS_KEY: secret };
  const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
  const model = chatModel(client, 'local/echo', { env });
  const guard = new SpendGuard({ prices: serviceListPrices(client), budgets: budgetLimits({ profile: 'logged', daily: 1 }), env });
  const tools = await ToolSet.open({ mcp: [`'${process.execPath}' '${FIXTURE}' env`], env });
  try {
    await model.prompt('hi', { guard, request: { max_completion_tokens: 10 } });
    // A hold is taken while a call is under way: logged then too.
    await guard.check({ body: { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 10 }, models: ['local/echo'], limitField: 'max_completion_tokens', completes: true });
    const logged = { model, conversation: model.conversation(), guard, tools };
    for (const [name, value] of Object.entries(logged)) {
      // Was the whole environment, as given or process.env: console.log(model) printed every secret in it.
      expect(JSON.stringify(value) ?? '', name).not.toContain(secret);
      expect(inspect(value, { depth: 20 }), name).not.toContain(secret);
    }
    guard.unsent();
  } finally {
    guard.release();
    await tools.close();
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a guard made without prices is refused where it is made; pricesFrom takes the model list as it is kept', async () => {
  // Was accepted, then a TypeError (this.opts.prices is not a function) at the first prompt.
  expect(() => new SpendGuard({ maxCost: 1 } as never)).toThrow(ValidationError);
  expect(() => new SpendGuard({ maxCost: 1 } as never)).toThrow('serviceListPrices(client)');
  const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
  try {
    // The list a program keeps, as the docs word it: was "list is not a function" at the first check.
    const kept = await client.models.list();
    const guard = new SpendGuard({ prices: pricesFrom(kept), maxCost: 0.000001 });
    const refused = await chatModel(client, 'local/echo').prompt('hi', { guard }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(SpendError);
    expect(refused).toMatchObject({ code: 'cost_cap_exceeded' });
  } finally {
    await client.close();
  }
});

it("a prompt its caller's signal stops mid-stream is counted by its guard, as the service may have charged it", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-libuser-79-stop-'));
  const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
  const guard = new SpendGuard({ prices: serviceListPrices(client), maxCost: 1, budgets: budgetLimits({ profile: 'stopped', daily: 1 }), env: { ROUTER_STATE_DIR: dir } });
  const stop = new AbortController();
  let pieces = 0;
  try {
    const onText = () => (++pieces === 3 ? stop.abort(new Error('enough')) : undefined);
    await expect(chatModel(client, 'local/lorem').prompt('write 300 words', { guard, signal: stop.signal, onText })).rejects.toThrow('enough');
    // Was 0 and an empty ledger: a program that stops each answer early was never held to its cap or budget.
    expect(guard.spent).toBeGreaterThan(0);
    expect(readFileSync(join(dir, 'usage.jsonl'), 'utf8')).toContain('"unsettled":');
    // Stopped before it was sent: nothing was, and nothing is counted.
    const before = guard.spent;
    await expect(chatModel(client, 'local/lorem').prompt('hi', { guard, signal: AbortSignal.abort(new Error('never')) })).rejects.toThrow('never');
    expect(guard.spent).toBe(before);
  } finally {
    guard.release();
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a tool with no run() (a declaration in tools, from JavaScript) is refused before anything is sent', async () => {
  const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
  try {
    // Was sent, and the model told "the tool failed: tool.run is not a function" at its first call.
    const refused = await chatModel(client, 'local/tools').prompt('please add', { tools: [{ name: 'add' } as never] }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ToolSourceError);
    expect(refused).toMatchObject({ code: 'invalid', message: expect.stringContaining('tools[0] (add) is no tool: make it with functionTool()') });
  } finally {
    await client.close();
  }
});

it('a schema given as text (from JavaScript) is read as answerSchema() reads it, else a SchemaError', async () => {
  const client = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot });
  const model = chatModel(client, 'local/lorem');
  try {
    // Was a TypeError: "Cannot use 'in' operator to search for 'validate' in …".
    const city = await model.prompt('a city', { schema: '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}' as never });
    expect(typeof (city.json as { name: unknown }).name).toBe('string');
    await expect(model.prompt('a city', { schema: 'name, age int' as never })).rejects.toThrow(SchemaError);
    await expect(model.prompt('a city', { schema: 5 as never })).rejects.toMatchObject({ name: 'SchemaError', code: 'not_object' });
  } finally {
    await client.close();
  }
});

it('a key with its file\'s newline is refused where the client is made, naming apiKey', () => {
  const key = `${emu.store.firstKeys().apiKey}\n`;
  // Was refused at each call as "the value of header authorization …", which the program never named.
  expect(() => new RouterClient({ apiKey: key, apiRoot: emu.apiRoot })).toThrow(ValidationError);
  expect(() => new RouterClient({ apiKey: key, apiRoot: emu.apiRoot })).toThrow(/^apiKey holds a line break .*trim\(\) it/);
});
