import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Neighbours of session 57's CLI edges, found by trying the packed CLI as a user.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('embed --file of blank lines (or empty) names the file and what it held, as stdin does; nothing sent', async () => {
  const blank = join(t.dir, 'blank.txt');
  writeFileSync(blank, '\n  \n');
  const empty = join(t.dir, 'empty.txt');
  writeFileSync(empty, '');
  const before = t.requests().length;
  // Was: "no input to embed", the file and what it held unsaid.
  expect(await run(['embed', '--model', 'local/embed', '--file', blank])).toMatchObject({ code: 2, stdout: '', stderr: `error: no input to embed: --file ${blank} holds only blank lines\n` });
  expect(await run(['embed', '--model', 'local/embed', '--file', empty])).toMatchObject({ code: 2, stdout: '', stderr: `error: no input to embed: --file ${empty} is empty\n` });
  expect(t.requests().slice(before)).toEqual([]);
});

it('a JSON file or stdin of blank lines (--schema, --tools, --input) is said as such, not "Unexpected end of JSON input"', async () => {
  const blank = join(t.dir, 'blank.json');
  writeFileSync(blank, '\n\n');
  const before = t.requests().length;
  // Was: "--schema: FILE is not valid JSON (Unexpected end of JSON input)", and so for each.
  expect(await run(['chat', '-m', 'local/echo', '--schema', blank, 'hi'])).toMatchObject({ code: 2, stdout: '', stderr: `error: --schema: ${blank} holds only blank lines\n` });
  expect((await run(['chat', '-m', 'local/tools', '--tools', blank, 'hi'])).stderr).toBe(`error: --tools: ${blank} holds only blank lines\n`);
  expect((await run(['responses', '-m', 'local/echo', '--input', blank])).stderr).toBe(`error: --input: ${blank} holds only blank lines\n`);
  expect((await run(['responses', '-m', 'local/echo', '--input', '-'], {}, '  ')).stderr).toBe('error: --input -: stdin held only spaces\n');
  expect((await run(['chat', '-m', 'local/echo', '--schema', '-', 'hi'], {}, '')).stderr).toBe('error: --schema -: stdin was empty\n');
  expect(t.requests().slice(before)).toEqual([]);
});

it('api --jq with a body that asks for a stream is refused before it is sent, not after the whole stream was paid for', async () => {
  const before = t.requests().length;
  const fields = ['-F', 'model=local/lorem', '-f', 'messages[][role]=user', '-f', 'messages[][content]=5 words'];
  const refusal = 'error: --jq filters a JSON answer, and this body asks for an event stream ("stream": true): nothing was sent; drop --jq, or "stream"\n';
  // Was: the whole stream read, then "the answer is not JSON (… bytes): --paginate and --jq need JSON", exit 7.
  expect(await run(['api', 'POST', '/v1/chat/completions', ...fields, '-F', 'stream=true', '--jq', '.id'])).toMatchObject({ code: 2, stdout: '', stderr: refusal });
  const body = JSON.stringify({ model: 'local/lorem', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  expect(await run(['api', 'POST', '/v1/chat/completions', '--input', '-', '--jq', '.id'], {}, body)).toMatchObject({ code: 2, stderr: refusal });
  expect(t.requests().slice(before)).toEqual([]);
  // Without stream, --jq filters the answer; with it and no --jq, the stream is printed as it came.
  expect((await run(['api', 'POST', '/v1/chat/completions', ...fields, '--jq', '.object'])).stdout).toBe('chat.completion\n');
  expect((await run(['api', 'POST', '/v1/chat/completions', ...fields, '-F', 'stream=true'])).stdout).toMatch(/^data: \{/m);
});

it('a --jq that halts a chat named by --conversation (or -c) says the turn was not kept', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'halt-kept') };
  const halting = ['--stream', '--json', '--jq', 'select(.id) | .id, halt', '20000 words'];
  // Was: exit 0, nothing said, and no conversation "halted" to go on with.
  const r = await run(['chat', '-m', 'local/lorem', '--conversation', 'halted', ...halting], env);
  expect(r).toMatchObject({ code: 0, stderr: 'warning: this turn was not kept in conversation halted (--jq halted: the answer was cut there)\n' });
  expect(r.stdout).toMatch(/^gen-/);
  expect((await run(['conversations', 'show', 'halted'], env)).code).toBe(5);
  expect((await run(['chat', '-m', 'local/echo', '--conversation', 'kept', 'hi'], env)).code).toBe(0);
  expect((await run(['chat', '-m', 'local/lorem', '-c', ...halting], env)).stderr).toBe('warning: this turn was not kept in conversation kept (--jq halted: the answer was cut there)\n');
  // Not named: nothing to say (a script's --jq halt is what it asked for).
  expect((await run(['chat', '-m', 'local/lorem', ...halting], env)).stderr).toBe('');
});

it('an --mcp server script without its execute bit is said as such (exit 12), as a tool script is (126)', async () => {
  const script = join(t.dir, 'server.sh');
  writeFileSync(script, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
  // Was: "could not start: spawn …/server.sh EACCES".
  expect(await run(['chat', '-m', 'local/tools', '--mcp', script, 'hi'])).toMatchObject({ code: 12, stdout: '', stderr: `error: MCP server ${script}: could not start: the command is not executable (chmod +x it, or give its interpreter first: sh FILE)\n` });
});
