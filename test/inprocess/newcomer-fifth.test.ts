import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { testStreams, runInProcess } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { startFixtureServer } from '../support/fixture-server.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Issue 46, round 5: the edges the fourth newcomer pass left.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('router api --input with an empty stdin or file is refused before anything is sent', async () => {
  const api = ['api', 'POST', '/v1/chat/completions', '--input'];
  expect(await run([...api, '-'], {}, '')).toMatchObject({ code: 2, stdout: '', stderr: 'error: --input -: stdin was empty (pipe the body in; a POST with no body is router api POST PATH)\n' });
  expect((await run([...api, '-'], {}, ' \n\t\n')).code).toBe(2);
  const empty = join(t.dir, 'empty-body.json');
  writeFileSync(empty, '');
  expect((await run([...api, empty])).stderr).toBe(`error: --input: ${empty} is empty (a POST with no body is router api POST PATH)\n`);
  expect(t.requests()).toEqual([]);
  // A body is sent as before.
  const body = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
  expect((await run([...api, '-', '--jq', '.choices[0].message.content'], {}, body)).stdout).toBe('hi\n');
});

it('roles save over a role of that name says it replaced it, piped too', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'roles-replaced') };
  const save = (system: string, extra: string[] = []) => run(['roles', 'save', 'terse', '--system', system, ...extra], env);
  expect(await save('Answer in one line.')).toMatchObject({ code: 0, stderr: '' });
  const path = join(env.ROUTER_CONFIG_DIR, 'roles', 'terse.md');
  expect(await save('Answer in one word.')).toMatchObject({ code: 0, stdout: '', stderr: `note: replaced role terse (${path})\n` });
  expect(readFileSync(path, 'utf8')).toBe('Answer in one word.\n');
  expect((await save('Answer in two words.', ['-q'])).stderr).toBe('');
  // The same role saved again replaces nothing.
  expect((await save('Answer in two words.')).stderr).toBe('');
  expect((await save('Answer in two words.', ['--model', 'local/echo'])).stderr).toBe(`note: replaced role terse (${path})\n`);
});

it('conversations list shows the model that answered a chat that named none', async () => {
  const state = join(t.dir, 'list-state');
  const env = { ROUTER_STATE_DIR: state };
  expect((await run(['chat', '--conversation', 'unnamed', 'hello there'], env)).code).toBe(0);
  expect((await run(['chat', '--conversation', 'named', '--model', 'local/lorem', 'hi'], env)).code).toBe(0);
  // Kept before the model that answered was: a word, not "-".
  const now = new Date().toISOString();
  writeFileSync(join(state, 'conversations', 'older.json'), JSON.stringify({ id: 'older', title: 'older', created_at: now, updated_at: now, messages: [{ role: 'user', content: 'x' }] }));
  const rows = (await run(['conversations', 'list'], env)).stdout.trim().split('\n').map((l) => l.split('\t'));
  expect(Object.fromEntries(rows.map((r) => [r[0], r[3]]))).toEqual({ unnamed: 'local/echo', named: 'local/lorem', older: 'default' });
  const json = JSON.parse((await run(['conversations', 'list', '--json', 'id,model,answered_by'], env)).stdout);
  expect(json).toContainEqual({ id: 'unnamed', model: null, answered_by: 'local/echo' });
  // Taken up with a model named: that model, and the answered_by of before goes.
  expect((await run(['chat', '--conversation', 'unnamed', '--model', 'local/lorem', 'more'], env)).code).toBe(0);
  const kept = JSON.parse(readFileSync(join(state, 'conversations', 'unnamed.json'), 'utf8'));
  expect([kept.model, kept.answered_by]).toEqual(['local/lorem', undefined]);
  expect(readdirSync(join(state, 'conversations')).filter((f) => f.endsWith('.json')).length).toBe(3);
});

it('chat -i --tools with no model says which model answered, and the ledger has it', async () => {
  const state = join(t.dir, 'repl-tools-state');
  mkdirSync(state, { recursive: true });
  const tools = join(t.dir, 'repl-tools.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'the weather', parameters: { type: 'object', properties: {} } }, command: 'echo sunny' }]));
  const s = testStreams({ env: { ...t.env, ROUTER_STATE_DIR: state, NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
  const keys = new PassThrough();
  s.streams.stdin = keys;
  const session = main(['node', 'router', 'chat', '-i', '--tools', tools], s.streams);
  const prompts = () => (s.stderr().match(/> /g) ?? []).length;
  for (const [i, line] of ['first', '/exit'].entries()) {
    expect(await until(() => prompts() > i)).toBe(true);
    keys.write(`${line}\n`);
  }
  expect(await session).toBe(0);
  expect(s.stderr().match(/answered by [^\n]*/g)).toEqual(["answered by local/echo, the service's default model; /model picks one)"]);
  const usage = await run(['usage', '--by', 'model', '--json'], { ROUTER_STATE_DIR: state });
  expect(JSON.parse(usage.stdout).rows).toEqual([expect.objectContaining({ key: 'local/echo', calls: 1 })]);
  // Its conversation is listed with that model too.
  expect((await run(['conversations', 'list'], { ROUTER_STATE_DIR: state })).stdout).toMatch(/^c_\w+\t\S+\t1\tlocal\/echo\tfirst\n$/);
});

it('a prompt that starts with "-" and holds a space or an apostrophe is refused whole, with the -- form', async () => {
  const hint = (cmd: string, text: string) => `error: unknown option '${text}' (text that starts with "-" goes after --, as in router ${cmd} -- '${text.replace(/'/g, "'\\''")}'); see "router ${cmd} --help"\n`;
  // -i is chat's --interactive, -t its --temperature, -q the global --quiet: no flag is read from the text.
  for (const text of ["-it's cold", '-i think so', '-q is it', "-it's"]) {
    expect(await run(['chat', '--model', 'local/echo', text])).toMatchObject({ code: 2, stdout: '', stderr: hint('chat', text) });
  }
  expect((await run(['responses', '-q', "-it's cold", '--model', 'local/echo'])).stderr).toBe(hint('responses', "-it's cold"));
  expect(t.requests()).toEqual([]);
  // The value of a flag, attached or not, and text after --, are as before.
  expect(await run(['chat', '--model', 'local/echo', '--', "-it's cold"])).toMatchObject({ code: 0, stdout: "-it's cold\n" });
  for (const flags of [['--system', "-you're terse"], ['-s', "-you're terse"], ["-s-you're"]]) {
    expect(await run(['chat', '--model', 'local/echo', ...flags, 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n' });
    expect(t.requests().at(-1)?.body.messages[0]).toEqual({ role: 'system', content: flags.at(-1)!.replace(/^-s/, '') });
  }
  // A flag run together with others is still flags, and so is a value attached to the last of them.
  expect((await run(['chat', '-qm', 'local/echo', 'hi'])).stdout).toBe('hi\n');
  for (const flags of [["-qsYou're"], ['-qsterse']]) {
    expect(await run(['chat', '--model', 'local/echo', ...flags, 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n', stderr: '' });
    expect(t.requests().at(-1)?.body.messages[0]).toEqual({ role: 'system', content: flags[0]!.slice(3) });
  }
});

it('a refused voice gets its guess from the model list, whatever the service\'s words', async () => {
  const server = await startFixtureServer({
    'GET /api/v1/models': { body: { data: [{ id: 'acme/tts', name: 'tts', supported_voices: ['alloy', 'ember', 'sage'] }] } },
    'POST /api/v1/audio/speech': { status: 400, body: { error: { code: 400, message: 'Invalid voice parameter' } } },
  });
  try {
    const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_MANAGEMENT_KEY: 'sk-test-mgmt-000000', ROUTER_CONFIG_DIR: join(t.dir, 'no-config'), ROUTER_STATE_DIR: join(t.dir, 'voice-state'), ROUTER_PROFILE: '' };
    const r = await runInProcess(['speak', 'hi', '--voice', 'alloi', '--model', 'acme/tts', '--max-retries', '0', '-o', join(t.dir, 'v.mp3')], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/: 400 Bad Request: Invalid voice parameter \(voice "alloi" is not one of acme\/tts's; did you mean alloy\?; the voices of acme\/tts: alloy, ember, sage\)\n$/);
  } finally {
    await server.close();
  }
});

it('a 400 that does not speak of a voice looks nothing up in the model list', async () => {
  const server = await startFixtureServer({
    'GET /api/v1/models': { body: { data: [{ id: 'acme/tts', name: 'tts', supported_voices: ['alloy', 'ember', 'sage'] }] } },
    'POST /api/v1/audio/speech': { status: 400, body: { error: { code: 400, message: 'speed must be between 0.25 and 4' } } },
  });
  try {
    const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_MANAGEMENT_KEY: 'sk-test-mgmt-000000', ROUTER_CONFIG_DIR: join(t.dir, 'no-config'), ROUTER_STATE_DIR: join(t.dir, 'speed-state'), ROUTER_PROFILE: '' };
    const r = await runInProcess(['speak', 'hi', '--voice', 'alloi', '--model', 'acme/tts', '--max-retries', '0', '-o', join(t.dir, 'speed.mp3')], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/: 400 Bad Request: speed must be between 0\.25 and 4\n$/);
    expect(server.requests.map((q) => `${q.method} ${q.url}`)).toEqual(['POST /api/v1/audio/speech']);
  } finally {
    await server.close();
  }
});

it('a prompt asked of an empty stdin says stdin was empty, not to pipe it', async () => {
  expect(await run(['chat', '--model', 'local/echo', '-'], {}, '')).toMatchObject({ code: 2, stdout: '', stderr: 'error: no prompt: stdin was empty (echo hi | router chat, or give the prompt as arguments)\n' });
  expect((await run(['chat', '--model', 'local/echo'], {}, '\n')).stderr).toBe('error: no prompt: stdin held only blank lines (echo hi | router chat, or give the prompt as arguments)\n');
  expect((await run(['embed', '--model', 'local/embed', '-'], {}, '')).stderr).toBe('error: no input: stdin was empty (echo text | router embed --model local/embed, or give the input as arguments)\n');
  expect(t.requests()).toEqual([]);
});
