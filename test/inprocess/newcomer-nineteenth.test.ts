import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
  RouterClient,
} from '../../src/client/index.js';
import type { Emulator } from '../../src/emulator/server.js';
import { chatModel, commandTool, ToolSet, toolEnv } from '../../src/kit/index.js';
import { emulatorPerFile } from '../support/inprocess-env.js';
import { running } from '../support/run-process.js';
import { until } from '../support/until.js';

// Issue 46, round 19: a programmer using router-cli as a library, from the packed tarball.
const FIXTURE = resolve(import.meta.dirname, '..', 'support', 'mcp-fixture-server.mjs');
let emu: Emulator;

emulatorPerFile('router-newcomer-19-', (f) => ({ emu } = f));

const hi = { model: 'local/echo', messages: [{ role: 'user' as const, content: 'hi' }] };

async function failureOf(fault: string): Promise<unknown> {
  const faulted = new RouterClient({ apiKey: emu.store.firstKeys().apiKey, apiRoot: emu.apiRoot, maxRetries: 0, headers: { 'x-router-fault': fault } });
  try {
    return await faulted.chat.create(hi).then(() => undefined, (err: unknown) => err);
  } finally {
    await faulted.close();
  }
}

it('an error answer is the APIError of its status: a program catches 401, 402 and 429 by instanceof', async () => {
  // Was a plain APIError for every status: a program coming from openai-node found no class to catch.
  const stranger = new RouterClient({ apiKey: 'sk-not-a-key', apiRoot: emu.apiRoot });
  const refused = await stranger.key.get().catch((err: unknown) => err);
  await stranger.close();
  expect(refused).toBeInstanceOf(AuthenticationError);
  expect(refused).toMatchObject({ name: 'AuthenticationError', status: 401 });

  const classes = { 400: BadRequestError, 402: PaymentRequiredError, 403: PermissionDeniedError, 404: NotFoundError, 429: RateLimitError, 500: InternalServerError, 503: InternalServerError };
  for (const [status, Class] of Object.entries(classes)) {
    const err = await failureOf(status);
    expect(err, status).toBeInstanceOf(Class);
    expect(err).toBeInstanceOf(APIError);
    expect(err).toMatchObject({ status: Number(status), name: Class.name });
  }
  const rated = await failureOf('429,retry_after=3');
  expect(rated).toMatchObject({ name: 'RateLimitError', retryAfterMs: 3000, errorType: 'rate_limit_exceeded' });
  // A status without a class of its own stays an APIError, and no class takes another's.
  const other = await failureOf('409');
  expect(other).toMatchObject({ name: 'APIError', status: 409 });
  for (const Class of new Set(Object.values(classes))) expect(other).not.toBeInstanceOf(Class);
});

it('ToolSet.open aborted while a server starts ends the server at once, as a tool command is ended', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-newcomer-19-open-'));
  const pidFile = join(dir, 'silent.pid');
  const stop = new AbortController();
  try {
    const opening = ToolSet.open({ mcp: [[process.execPath, FIXTURE, 'silent', pidFile].map((a) => `'${a}'`).join(' ')], env: toolEnv(process.env), signal: stop.signal });
    expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'))).toBe(true);
    stop.abort(new Error('the user gave up'));
    await expect(opening).rejects.toThrow('the user gave up');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(await until(() => !running(pid))).toBe(true);
    // Was eof, then term 2 s later: the abort waited for a server that never takes the end of its stdin.
    expect(readFileSync(`${pidFile}.heard`, 'utf8').split('\n')[0]).toBe('term');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it("two clients in one program: a tool a prompt of one runs never gets the other's key, nor does a server toolEnv() starts", async () => {
  const mine = emu.store.firstKeys().apiKey;
  const theirs = 'sk-rt-v1-the-other-clients-key-0123456789';
  const a = new RouterClient({ apiKey: mine, apiRoot: emu.apiRoot });
  const b = new RouterClient({ apiKey: theirs, apiRoot: 'http://127.0.0.1:9/api' });
  // As a program that read each key from a variable of its own, and made its tool before either client.
  const env = { PATH: process.env.PATH!, MY_A: mine, MY_B: theirs };
  const dump = commandTool({ name: 'envdump', parameters: { type: 'object', properties: {} } }, ['sh', '-c', 'env | sort'], env);
  try {
    const r = await chatModel(a, 'local/tools').prompt('please envdump', { tools: [dump] });
    expect(r.toolCalls.map((c) => c.outcome.status)).toEqual(['ok']);
    // Was MY_B=sk-rt-v1-the-other-…: the tool, and so the model, got the other client's key.
    expect(r.toolCalls[0]!.outcome.text).not.toContain(theirs);
    expect(r.toolCalls[0]!.outcome.text).not.toContain(mine);
    expect(r.toolCalls[0]!.outcome.text).toContain('PATH=');
    // What an MCP server starts with: toolEnv() leaves out the keys of this process's clients too.
    expect(toolEnv(env)).toEqual({ PATH: process.env.PATH });
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
