import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RouterClient, ValidationError } from '../../src/client/index.js';
import { attachmentFromBytes, chatModel, ValidationError as KitValidationError, chatWithTools, commandTool, ConversationStore, functionTool, InvalidAmount, queryLog, ResultBudget, runToolCall, serviceListPrices, SpendGuard, ToolSet, ToolSourceError, type ToolSetOptions } from '../../src/kit/index.js';
import { kitPerTest } from '../support/inprocess-env.js';

// What a JavaScript program passes the kit where a number or an attachment goes: a NaN, a string or a
// negative number is refused before anything is sent, as the CLI refuses its flags; taken as it came, a cap
// held nothing and a bound or a timeout said nonsense.
let emu: Emulator;
let client: RouterClient;
let stateDir: string;

kitPerTest('router-kit-numbers-', (f) => ({ emu, client, stateDir } = f));

const sentChats = () => emu.requestLog.filter((r) => r.path.endsWith('/chat/completions')).length;
const refusal = (p: Promise<unknown>) => p.then(() => 'no error', (err: unknown) => err);

it("a SpendGuard's maxCost that is no amount of USD is an InvalidAmount when the guard is made", () => {
  const prices = serviceListPrices(client);
  for (const maxCost of [Number.NaN, 'abc', '0.5', -1, Infinity] as unknown[]) {
    // Was taken: NaN and a string held no call (every comparison with them false), -1 refused each one.
    expect(() => new SpendGuard({ prices, maxCost: maxCost as number })).toThrow(InvalidAmount);
  }
  expect(() => new SpendGuard({ prices, maxCost: Number('') - 1 })).toThrow(/^maxCost is an amount of USD such as 2 or 0\.50, got -1$/);
  for (const maxCost of [0, 1e-9, 2]) expect(new SpendGuard({ prices, maxCost }).opts.maxCost).toBe(maxCost);
});

it("prompt()'s numbers are refused before anything is sent: maxToolRounds, toolTimeoutMs, resultsBytes", async () => {
  const add = functionTool('add', { type: 'object', properties: { a: { type: 'number' } } }, ({ a }) => a);
  const model = chatModel(client, 'local/tools');
  const before = sentChats();
  const bad = [{ maxToolRounds: -1 }, { maxToolRounds: 1.5 }, { toolTimeoutMs: -1 }, { toolTimeoutMs: Number.NaN }, { toolTimeoutMs: 2 ** 31 }, { resultsBytes: -1 }, { resultsBytes: '64' as unknown as number }];
  for (const opts of bad) {
    const err = await refusal(model.prompt('add', { tools: [add], ...opts }));
    expect(err, JSON.stringify(opts)).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(new RegExp(`^prompt\\(\\) ${Object.keys(opts)[0]} must be `));
  }
  expect(sentChats()).toBe(before);
  // 0 rounds runs no call: the first is a ToolCallsError holding it, as before.
  await expect(model.prompt('add', { tools: [add], maxToolRounds: 0 })).rejects.toMatchObject({ code: 'max_rounds' });
  expect((await model.prompt('add', { tools: [add], maxToolRounds: 1, toolTimeoutMs: 5_000, resultsBytes: 1024 })).text).toMatch(/add answered/);
});

it("chatWithTools()'s maxRounds and timeoutMs are checked the same way", async () => {
  const add = functionTool('add', { type: 'object', properties: { a: { type: 'number' } } }, ({ a }) => a);
  const request = { model: 'local/tools', messages: [{ role: 'user' as const, content: 'add' }] };
  const before = sentChats();
  for (const opts of [{ maxRounds: -2 }, { timeoutMs: 0 }]) {
    const err = await refusal(chatWithTools(client, request, { tools: new Map([['add', add]]), ...opts }));
    expect(err, JSON.stringify(opts)).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(new RegExp(`^chatWithTools\\(\\) ${Object.keys(opts)[0]} must be `));
  }
  expect(sentChats()).toBe(before);
});

it('attachmentFromBytes() of a string is a ValidationError saying how to make bytes of it', async () => {
  // Was node's TypeError: "The first argument must be of type string or an instance of Buffer, … Received undefined".
  await expect(attachmentFromBytes('lunch at noon\n' as unknown as Uint8Array, { filename: 'notes.txt' })).rejects.toThrow(/^attachmentFromBytes\(\) takes bytes \(a Buffer or a Uint8Array\), not a string: Buffer\.from\(text\)$/);
  expect((await attachmentFromBytes(new TextEncoder().encode('lunch at noon\n'), { filename: 'notes.txt' })).mediaType).toBe('text/plain');
});

it("a prompt or system that is no string is refused before it is sent", async () => {
  const model = chatModel(client, 'local/echo');
  const before = sentChats();
  // Was sent: the service's 400 ("messages[0].content must be a string or an array of parts"); undefined went as "".
  await expect(refusal(model.prompt(42 as unknown as string))).resolves.toMatchObject({ name: 'ValidationError', message: 'prompt() takes its prompt as a string, not 42' });
  await expect(refusal(model.prompt(undefined as unknown as string))).resolves.toMatchObject({ message: 'prompt() takes its prompt as a string, not nothing' });
  await expect(refusal(model.conversation().prompt('hi', { system: 5 as unknown as string }))).resolves.toMatchObject({ message: 'prompt() system must be a string, not 5' });
  expect(sentChats()).toBe(before);
});

it('an attachment that is a path, not one readAttachment() made, is refused before anything is sent', async () => {
  const model = chatModel(client, 'local/vision');
  const before = sentChats();
  for (const attachments of [['photo.png'], 'photo.png', [{ path: 'photo.png' }]] as unknown[]) {
    // Was sent as a file part without data: the service's 400 ("file_data must be an http(s) or data: URL").
    const err = await refusal(model.prompt('what is it?', { attachments: attachments as [] }));
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(/^prompt\(\) attachments.* readAttachment\(/);
  }
  expect(sentChats()).toBe(before);
});

it("a call's timeoutMs that is no number of milliseconds over 0 is a ValidationError, not a ConnectionError; nothing is sent", async () => {
  const hi = { model: 'local/echo', messages: [{ role: 'user' as const, content: 'hi' }] };
  const before = emu.requestLog.length;
  for (const timeoutMs of [-1, 0, Number.NaN, '100'] as unknown[]) {
    // Was a ConnectionError "failed" (undici's "invalid headersTimeout"): a network failure, exit 8 in the CLI.
    const err = await refusal(client.chat.create(hi, { timeoutMs: timeoutMs as number }));
    expect(err, String(timeoutMs)).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(/^timeoutMs must be a number of milliseconds over 0, not /);
  }
  await expect(refusal(client.raw.send({ method: 'GET', path: '/v1/models' }, { timeoutMs: -1 }))).resolves.toBeInstanceOf(ValidationError);
  expect(emu.requestLog.length).toBe(before);
  expect((await client.chat.create(hi, { timeoutMs: 5_000 })).choices[0]!.message.content).toBe('hi');
});

it("runToolCall()'s timeoutMs and a ResultBudget's bytes are checked as prompt()'s are", async () => {
  const add = functionTool('add', { type: 'object', properties: {} }, () => 1);
  const call = { id: '1', name: 'add', arguments: '{}' };
  const signal = new AbortController().signal;
  // Was "the tool did not end within NaN s and was stopped".
  await expect(refusal(runToolCall(new Map([['add', add]]), call, { signal, timeoutMs: Number.NaN, budget: new ResultBudget() }))).resolves.toBeInstanceOf(ValidationError);
  expect(() => new ResultBudget(-1)).toThrow(/^new ResultBudget\(\) bytes must be a whole number of at least 1, not -1$/);
  expect((await runToolCall(new Map([['add', add]]), call, { signal, timeoutMs: 1_000, budget: new ResultBudget(10) })).text).toBe('1');
});

it('ToolSet.open() refuses what is no list, no tool or no name the API takes, before a server starts or a call is sent', async () => {
  const add = functionTool('add', { type: 'object', properties: {} }, () => 1);
  const bad: [unknown, RegExp][] = [
    // Was "MCP server m: could not start": the string's letters taken as servers.
    [{ mcp: 'mcp-server-everything stdio' }, /^ToolSet\.open\(\) mcp must be an array, not "mcp-server-everything stdio": mcp: \['mcp-server-everything stdio'\]$/],
    [{ tools: add }, /^ToolSet\.open\(\) tools must be an array, not an object$/],
    [{ tools: [add], roots: '/tmp' }, /^ToolSet\.open\(\) roots must be an array/],
    [{ tools: [functionTool('get weather!', { type: 'object', properties: {} }, () => 1)] }, /^ToolSet\.open\(\) tool name "get weather!": a tool's name is 1 to 64 letters/],
    [{ tools: [add, add] }, /^ToolSet\.open\(\) two tools are named add: /],
    [{ tools: [add], declared: [{ name: 'add' }] }, /^ToolSet\.open\(\) two tools are named add: /],
  ];
  for (const [opts, message] of bad) {
    const err = await refusal(ToolSet.open(opts as ToolSetOptions));
    expect(err, message.source).toBeInstanceOf(ToolSourceError);
    expect(err).toMatchObject({ code: 'invalid', message: expect.stringMatching(message) });
  }
  // The same through prompt(), and a tool not in [ ], which was left out: the model answered without it.
  const before = sentChats();
  await expect(refusal(chatModel(client, 'local/tools').prompt('x', { tools: [functionTool('a.b', { type: 'object', properties: {} }, () => 1)] }))).resolves.toBeInstanceOf(ToolSourceError);
  await expect(refusal(chatModel(client, 'local/tools').prompt('add', { tools: add as unknown as [] }))).resolves.toMatchObject({ name: 'ValidationError', message: 'prompt() tools must be an array of tools or a ToolSet: put a single tool in [ ]' });
  expect(sentChats()).toBe(before);
});

it('commandTool() with no command is a ToolSourceError when it is made, not a failure at the model\'s call', () => {
  const decl = { name: 'x', parameters: { type: 'object', properties: {} } };
  // Was made: its call failed with 'The "file" argument must be of type string', or ran nothing.
  for (const command of ['', '  ', [], [''], [5]] as unknown[]) expect(() => commandTool(decl, command as string[]), JSON.stringify(command)).toThrow(/^commandTool\(\) x: its command must be a shell line or an array of arguments/);
  expect(commandTool(decl, ['date', '+%Y']).name).toBe('x');
});

it("ToolSet.open()'s startTimeoutMs and queryLog()'s count are checked too", async () => {
  const add = functionTool('add', { type: 'object', properties: {} }, () => 1);
  // Was a start that timed out at once: "did not answer within NaN s".
  for (const startTimeoutMs of [-1, Number.NaN, 0]) {
    await expect(refusal(ToolSet.open({ tools: [add], startTimeoutMs }))).resolves.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/^ToolSet\.open\(\) startTimeoutMs must be a number of milliseconds over 0/) });
  }
  const store = new ConversationStore({ dir: join(stateDir, 'conversations') });
  await chatModel(client, 'local/echo').conversation({ store, id: 'kept' }).prompt('hi');
  // Was -1: no turn, NaN: every one, 1.5: two.
  for (const count of [-1, Number.NaN, 1.5]) expect(() => queryLog(store, { count }), String(count)).toThrow(/^queryLog\(\) count must be a whole number of at least 0, not /);
  expect([...queryLog(store, { count: 0 }).entries]).toHaveLength(1);
});

it('chatModel() without a model id is a ValidationError naming what it takes, not a TypeError later', () => {
  for (const id of [undefined, '', '  ', 42] as unknown[]) {
    expect(() => chatModel(client, id as string), String(id)).toThrow(ValidationError);
  }
  expect(() => chatModel(client, undefined as unknown as string)).toThrow(/^chatModel\(\) takes a model id or alias after the client, as chatModel\(client, 'local\/echo'\), not undefined$/);
  expect(chatModel(client, 'local/echo').id).toBe('local/echo');
  // What the kit throws, a program importing only router-cli/kit can name.
  expect(KitValidationError).toBe(ValidationError);
});

it('a value given where another kind goes is named one way everywhere (shownGiven): a string quoted, null, an array, an object, a function', async () => {
  const add = functionTool('add', { type: 'object', properties: {} }, () => 1);
  const open = async (opts: unknown) => ((await refusal(ToolSet.open(opts as ToolSetOptions))) as Error).message;
  // Were "not object" for null, "not number" for 5, a string unquoted or an array's JSON: each check its own way.
  expect(await open({ tools: [add], mcp: null })).toBe("ToolSet.open() mcp must be an array, not null: mcp: ['mcp-server-everything stdio']");
  expect(await open({ tools: [add], roots: { path: '/tmp' } })).toBe('ToolSet.open() roots must be an array, not an object');
  expect(await open({ tools: () => add })).toBe('ToolSet.open() tools must be an array, not a function');
  expect(await open({ mcp: [5] })).toBe('ToolSet.open() mcp[0] must be a command line or an http(s) URL, not 5');
  expect(await open({ mcp: [['mcp-server-everything', 'stdio']] })).toBe('ToolSet.open() mcp[0] must be a command line or an http(s) URL, not an array');
  expect(await open({ declared: [{ name: 7 }] })).toMatch(/^ToolSet\.open\(\) tool name 7: /);
  expect(await open({ tools: [add], startTimeoutMs: '100' })).toMatch(/^ToolSet\.open\(\) startTimeoutMs must be .*, not "100"$/);
  const model = chatModel(client, 'local/echo');
  expect(((await refusal(model.prompt(null as unknown as string))) as Error).message).toBe('prompt() takes its prompt as a string, not null');
  expect(((await refusal(model.prompt('hi', { system: ['be brief'] as unknown as string }))) as Error).message).toBe('prompt() system must be a string, not an array');
  expect(() => chatModel(client, { id: 'local/echo' } as unknown as string)).toThrow(/, not an object$/);
  expect(() => chatModel(client, ['local/echo'] as unknown as string)).toThrow(/, not an array$/);
  await expect(attachmentFromBytes(null as unknown as Uint8Array, { filename: 'a.txt' })).rejects.toThrow(/^attachmentFromBytes\(\) takes bytes \(a Buffer or a Uint8Array\), not null$/);
  await expect(attachmentFromBytes([104, 105] as unknown as Uint8Array, { filename: 'a.txt' })).rejects.toThrow(/, not an array$/);
});
