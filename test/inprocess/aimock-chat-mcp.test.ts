import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { LLMock } from '@copilotkit/aimock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAimock } from '../support/aimock.js';
import { runInProcess } from '../support/inprocess.js';

// `router chat` speaking straight to aimock (`@copilotkit/aimock`, an OpenAI-compatible mock we did not
// write) as its API root, with the tools of server-everything (the MCP reference server) over stdio.
// aimock's fixtures ask for the calls with set arguments, so the kinds of tool the server offers are
// each run as a model would ask for them: a long call with progress, a task-only tool, a resource.
const ROOT = resolve(import.meta.dirname, '..', '..');
const EVERYTHING = [process.execPath, join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'].map((a) => `'${a}'`).join(' ');

let mock: LLMock;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-aimock-chat-'));
  mock = await startAimock((m) => {
    // The turn after a tool round: matched by what the tool answered.
    m.on({ toolResultContains: 'Long running operation completed' }, { content: 'The operation finished.' });
    m.on({ toolResultContains: 'Research Report: cats' }, { content: 'Research is done.' });
    m.on({ toolResultContains: 'Resource 2: This is a plaintext resource' }, { content: 'Read the resource.' });
    m.onMessage('hello', { content: 'Hi there, from aimock!', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    m.onMessage('long op', { toolCalls: [{ name: 'trigger-long-running-operation', arguments: '{"duration":1.5,"steps":3}' }] });
    m.onMessage('research', { toolCalls: [{ name: 'simulate-research-query', arguments: '{"topic":"cats"}' }] });
    m.onMessage('resource ref', { toolCalls: [{ name: 'get-resource-reference', arguments: '{"resourceType":"Text","resourceId":2}' }] });
    m.onMessage('limit me', { error: { message: 'Rate limited', type: 'rate_limit_error' }, status: 429 });
    m.onMessage('server boom', { error: { message: 'boom', type: 'server_error' }, status: 500 });
    m.onMessage('no key', { error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key' }, status: 401 });
  });
});

afterAll(async () => {
  await mock?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const chat = (...args: string[]) =>
  runInProcess(['chat', '--model', 'openai/gpt-4o', '--max-retries', '0', ...args], {
    env: { ROUTER_API_ROOT: mock.url, ROUTER_API_KEY: 'sk-aimock-0123456789abcdef', ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'state'), XDG_STATE_HOME: join(dir, 'xdg') },
  });
/** What router sent aimock last: the tool results of the turn after a call. */
const lastToolResult = () => {
  const body = mock.getRequests().at(-1)!.body as { messages: { role: string; content: string }[] };
  return body.messages.filter((m) => m.role === 'tool').at(-1)?.content;
};

describe('router chat with aimock as its API root', () => {
  it('streamed, whole with --usage, --json: the fixture answer', async () => {
    expect(await chat('hello')).toMatchObject({ code: 0, stdout: 'Hi there, from aimock!\n', stderr: '' });
    expect(await chat('--no-stream', '--usage', 'hello')).toMatchObject({ code: 0, stdout: 'Hi there, from aimock!\n', stderr: 'usage: 10 prompt + 5 completion = 15 tokens\n' });
    const json = await chat('--json', 'hello');
    expect(JSON.parse(json.stdout)).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'Hi there, from aimock!' }, finish_reason: 'stop' }] });
  });

  it('its errors: one line each, with the documented exit code (429: 6, 500: 7, 401: 3)', async () => {
    for (const [ask, code, said] of [
      ['limit me', 6, 'error: POST /v1/chat/completions: 429 Too Many Requests: Rate limited\n'],
      ['server boom', 7, 'error: POST /v1/chat/completions: 500 Internal Server Error: boom\n'],
      ['no key', 3, 'error: POST /v1/chat/completions: 401 Unauthorized: bad key (check the API key in ROUTER_API_KEY)\n'],
    ] as const) {
      for (const stream of [[], ['--no-stream']]) expect(await chat(...stream, ask), `${ask} ${stream.join(' ')}`).toMatchObject({ code, stdout: '', stderr: said });
    }
  });
});

describe('router chat --mcp server-everything, the calls asked by aimock', () => {
  it('a long call: its progress on stderr (with --verbose), the last step too, then the answer', async () => {
    // Before: no progress was asked for; and the last step's notification, read with the answer, was dropped.
    const r = await chat('--verbose', '--mcp', EVERYTHING, 'long op');
    expect([r.code, r.stdout]).toEqual([0, 'The operation finished.\n']);
    const lines = r.stderr.split('\n');
    expect(lines).toContain('tool trigger-long-running-operation: 1/3');
    expect(lines).toContain('tool trigger-long-running-operation: 3/3');
    expect(lines.indexOf('tool trigger-long-running-operation: 3/3')).toBeLessThan(lines.findIndex((l) => l.startsWith('tool trigger-long-running-operation {')));
    // Without --verbose and off a terminal: nothing on stderr.
    expect(await chat('--mcp', EVERYTHING, 'long op')).toMatchObject({ code: 0, stdout: 'The operation finished.\n', stderr: '' });
  });

  it('a tool the server runs only as a task (taskSupport "required"): run as one, its status said, its result to the model', async () => {
    // Before: "requires task-based execution" sent to the model each round, until --max-tool-rounds (exit 11).
    const r = await chat('--verbose', '--mcp', EVERYTHING, 'research');
    expect([r.code, r.stdout]).toEqual([0, 'Research is done.\n']);
    expect(r.stderr).toContain('tool simulate-research-query: Gathering sources...\n');
    expect(r.stderr).toContain('tool simulate-research-query {"topic":"cats"} -> ok\n');
    expect(lastToolResult()).toMatch(/^# Research Report: cats\n/);
  });

  it('an embedded resource: its text goes to the model under its URI', async () => {
    const r = await chat('--mcp', EVERYTHING, 'resource ref');
    expect(r).toMatchObject({ code: 0, stdout: 'Read the resource.\n', stderr: '' });
    expect(lastToolResult()).toContain('[resource demo://resource/dynamic/text/2]\nResource 2: This is a plaintext resource');
  });
});
