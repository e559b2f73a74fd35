import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// A program that uses router-cli as a library (the built package, by its name) and watches what that
// does to its process: V8's flags, process listeners, globals (symbols too: undici's entry point sets
// node's global dispatcher under one), its stdout and stderr, process.exit,
// handles left open (it must end by itself). What only a process of its own shows.
const ROOT = resolve(import.meta.dirname, '..', '..');
const HOST = `
import v8 from 'node:v8';
import { writeFileSync } from 'node:fs';
const EVENTS = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection', 'warning'];
const snap = () => JSON.stringify({ heap: v8.getHeapStatistics().heap_size_limit, execArgv: process.execArgv, listeners: EVENTS.map((e) => process.listenerCount(e)), globals: Object.getOwnPropertyNames(globalThis).sort(), symbols: Object.getOwnPropertySymbols(globalThis).map(String).sort(), stackTraceLimit: Error.stackTraceLimit, env: process.env });
const written = [];
const [out, err] = [process.stdout.write, process.stderr.write];
process.stdout.write = process.stderr.write = (chunk) => written.push(String(chunk)) > 0;
process.exit = (code) => { throw new Error('process.exit(' + code + ')'); };
const before = snap();
const { RouterClient, APIError, ConnectionError } = await import('router-cli');
const { chatModel, commandTool, functionTool, ToolSet, toolEnv, SpendGuard, serviceListPrices, CostCapExceeded } = await import('router-cli/kit');
const { runJob, BatchError } = await import('router-cli/batch');
const afterImport = snap();
const client = new RouterClient({ apiKey: process.env.ROUTER_API_KEY, apiRoot: process.env.ROUTER_API_ROOT });
const seen = [];
const add = functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, ({ a, b }) => a + b);
const year = commandTool({ name: 'year', parameters: { type: 'object', properties: {} } }, ['date', '+%Y'], toolEnv(process.env));
const tools = await ToolSet.open({ tools: [add, year] });
const r = await chatModel(client, 'local/tools').prompt('call year', { tools, guard: new SpendGuard({ prices: serviceListPrices(client), maxCost: 0.05 }) });
seen.push(r.toolCalls.map((c) => c.call.name).join());
await tools.close();
writeFileSync('host-requests.jsonl', JSON.stringify({ custom_id: 'one', body: { messages: [{ role: 'user', content: 'first' }] } }) + '\\n');
// While the job's lock is held: the listeners added to the program's process, as docs/library.md says (one 'exit').
const listeners = EVENTS.map((e) => process.listenerCount(e));
const added = new Set();
const progress = () => added.add(EVENTS.map((e, i) => process.listenerCount(e) - listeners[i]).join());
seen.push((await runJob(client, { input: 'host-requests.jsonl', model: 'local/echo', fresh: true, interval: 0.05, on: { started: progress, submitted: progress } })).failed);
seen.push([...added]);
const caught = async (fn) => fn().then(() => 'no error', (e) => e);
seen.push((await caught(() => new RouterClient({ apiKey: 'sk-not-a-key', apiRoot: process.env.ROUTER_API_ROOT }).key.get())) instanceof APIError);
seen.push((await caught(() => new RouterClient({ apiKey: 'sk-not-a-key', apiRoot: 'http://127.0.0.1:9/api', maxRetries: 0 }).models.list())) instanceof ConnectionError);
seen.push((await caught(() => chatModel(client, 'local/echo').prompt('hi', { guard: new SpendGuard({ prices: serviceListPrices(client), maxCost: 1e-9 }) }))) instanceof CostCapExceeded);
seen.push((await caught(() => runJob(client, { input: 'host-requests.jsonl', fresh: true }))) instanceof BatchError);
await client.close();
const afterUse = snap();
process.stdout.write = out;
process.stdout.write(JSON.stringify({ seen, written, importChanged: afterImport !== before, useChanged: afterUse !== before, before, afterUse }));
`;

const t = startedForAll(() => startCliEnv());

/** A program run by node as a user runs it, against the test's emulator: its exit code and whole output. */
function runProgram(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [file], { cwd: t.dir, env: { ...process.env, ...t.env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

it('a program using the library keeps its flags, listeners, globals and output, is never exited, and ends by itself', async () => {
  // Inside the package, so that its name resolves to itself (as it does where it is installed).
  const file = join(ROOT, `.library-host-${process.pid}.mjs`);
  writeFileSync(file, HOST);
  try {
    const r = await runProgram(file);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { seen: unknown[]; written: string[]; importChanged: boolean; useChanged: boolean; before: string; afterUse: string };
    expect(report.seen).toEqual(['year', 0, ['1,0,0,0,0,0,0'], true, true, true, true]);
    expect(report.written).toEqual([]);
    expect(report.importChanged).toBe(false);
    expect(report.afterUse).toBe(report.before);
  } finally {
    rmSync(file, { force: true });
  }
});

it('a function tool that never settles is bounded by toolTimeoutMs: the program goes on and ends by itself', async () => {
  // Was: the bound's timer did not hold the event loop open, so a program awaiting such a prompt (a function awaiting
  // nothing that holds it either) ended at once, exit 13 ("unsettled top-level await"), the prompt never answered.
  const program = `
import { RouterClient } from 'router-cli';
import { chatModel, functionTool } from 'router-cli/kit';
const client = new RouterClient({ apiKey: process.env.ROUTER_API_KEY, apiRoot: process.env.ROUTER_API_ROOT });
const stuck = functionTool('stuck', { type: 'object', properties: {} }, () => new Promise(() => {}));
const r = await chatModel(client, 'local/tools').prompt('please stuck', { tools: [stuck], toolTimeoutMs: 2000 });
console.log(r.toolCalls.map((c) => c.call.name + ' ' + c.outcome.status).join());
await client.close();
`;
  const file = join(ROOT, `.library-host-stuck-${process.pid}.mjs`);
  writeFileSync(file, program);
  try {
    const r = await runProgram(file);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: 'stuck timeout\n', stderr: '' });
  } finally {
    rmSync(file, { force: true });
  }
});
