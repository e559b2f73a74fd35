import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { answeredByNote } from '../../src/cli/answers/answered-by.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Issue 46, round 4: what a new user still could not tell, or was told without the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

const DEFAULT_NOTE = "note: answered by local/echo, the service's default model (--model names one; router config set model keeps one)\n";

it('chat and responses with no model named say which model the service answered with, piped too', async () => {
  expect(await run(['chat', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n', stderr: DEFAULT_NOTE });
  expect(await run(['chat', '--no-stream', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n', stderr: DEFAULT_NOTE });
  expect(await run(['responses', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n', stderr: DEFAULT_NOTE });
  // A model named (a flag, the environment, a profile) and answering: nothing said, as scripts want.
  expect(await run(['chat', '--model', 'local/echo', 'hi'])).toMatchObject({ code: 0, stderr: '' });
  expect(await run(['chat', 'hi'], { ROUTER_MODEL: 'local/echo' })).toMatchObject({ code: 0, stderr: '' });
  expect(await run(['responses', '--model', 'local/echo', 'hi'])).toMatchObject({ code: 0, stderr: '' });
  // --quiet: no status; another model than the one asked is still said.
  expect(await run(['chat', '-q', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n', stderr: '' });
  expect((await run(['chat', '-q', '--model', 'local/unavailable', '--models', 'local/echo', 'hi'])).stderr).toContain('answered by local/echo, not local/unavailable');
  // --json holds the model itself.
  const json = await run(['chat', '--json', 'hi']);
  expect(json.stderr).toBe('');
  expect(JSON.parse(json.stdout).model).toBe('local/echo');
});

it('another model than the one asked answering (a fallback) is said, unless --router-metadata says the routing', async () => {
  const fell = await run(['chat', '--model', 'local/unavailable', '--models', 'local/echo', 'hi']);
  expect(fell).toMatchObject({ code: 0, stdout: 'hi\n', stderr: 'note: answered by local/echo, not local/unavailable (--router-metadata says why)\n' });
  const told = await run(['chat', '--model', 'local/unavailable', '--models', 'local/echo', '--router-metadata', 'hi']);
  expect(told.stderr).not.toContain('answered by');
  expect(told.stderr).toContain('router: attempts: local/unavailable');
  // A more specific form of the model asked (a dated version, a variant) is the model asked.
  expect(answeredByNote('openai/gpt-4o', 'openai/gpt-4o-2024-08-06')).toBeUndefined();
  expect(answeredByNote('meta/llama-3:free', 'meta/llama-3')).toBeUndefined();
  expect(answeredByNote('openai/gpt-4o', 'openai/gpt-4o-mini')).toBe('note: answered by openai/gpt-4o-mini, not openai/gpt-4o (--router-metadata says why)');
  expect(answeredByNote('anthropic/claude-3-5-sonnet', 'anthropic/claude-3-5-sonnet-20240620')).toBeUndefined();
  expect(answeredByNote('openai/gpt-4', 'openai/gpt-4-0613')).toBeUndefined();
  // A longer name with a number after the one asked is another model, not a version of it.
  expect(answeredByNote('openai/gpt-4', 'openai/gpt-4.1')).toBe('note: answered by openai/gpt-4.1, not openai/gpt-4 (--router-metadata says why)');
  expect(answeredByNote('anthropic/claude-3', 'anthropic/claude-3-5-sonnet')).toMatch(/^note: answered by anthropic\/claude-3-5-sonnet, not/);
});

it('chat -i with no model says once which model answered, and the ledger has it', async () => {
  const state = join(t.dir, 'repl-state');
  const s = testStreams({ env: { ...t.env, ROUTER_STATE_DIR: state, NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
  const keys = new PassThrough();
  s.streams.stdin = keys;
  const session = main(['node', 'router', 'chat', '-i'], s.streams);
  const prompts = () => (s.stderr().match(/> /g) ?? []).length;
  for (const [i, line] of ['first', 'second', '/exit'].entries()) {
    expect(await until(() => prompts() > i)).toBe(true);
    keys.write(`${line}\n`);
  }
  expect(await session).toBe(0);
  expect(s.stderr().match(/answered by [^\n]*/g)).toEqual(["answered by local/echo, the service's default model; /model picks one)"]);
  const usage = await run(['usage', '--by', 'model', '--json'], { ROUTER_STATE_DIR: state });
  expect(JSON.parse(usage.stdout).rows).toEqual([expect.objectContaining({ key: 'local/echo', calls: 2 })]);
});

it('chat -i with --models names its model: no note of a default', async () => {
  const s = testStreams({ env: { ...t.env, NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
  const keys = new PassThrough();
  s.streams.stdin = keys;
  const session = main(['node', 'router', 'chat', '-i', '--models', 'local/echo'], s.streams);
  const prompts = () => (s.stderr().match(/> /g) ?? []).length;
  for (const [i, line] of ['first', '/exit'].entries()) {
    expect(await until(() => prompts() > i)).toBe(true);
    keys.write(`${line}\n`);
  }
  expect(await session).toBe(0);
  expect(s.stdout()).toContain('first');
  expect(s.stderr()).not.toContain('answered by');
});

it('a mistyped --voice gets a guess from the model\'s voices, from the flag or from ROUTER_VOICE', async () => {
  const speak = (args: string[], env: Record<string, string> = {}) => run(['speak', ...args], { ROUTER_MANAGEMENT_KEY: t.managementKey, ...env });
  const typed = await speak(['hi', '--voice', 'alloi', '--model', 'local/tts', '-o', join(t.dir, 'a.mp3')]);
  expect(typed.code).toBe(2);
  expect(typed.stderr).toMatch(/^error: POST \S+: 400 Bad Request: voice "alloi" is not a voice of local\/tts \(alloy, ember, sage\) \(did you mean alloy\?\)\n$/);
  const env = await speak(['hi', '--model', 'local/tts', '-o', join(t.dir, 'b.mp3')], { ROUTER_VOICE: 'sgae' });
  expect(env.stderr).toMatch(/ \(from ROUTER_VOICE; did you mean sage\?\)\n$/);
  const turns = join(t.dir, 'turns.json');
  writeFileSync(turns, JSON.stringify([{ text: 'one', voice: 'embr' }]));
  expect((await speak(['--turns', turns, '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'c.mp3')])).stderr).toMatch(/voice "embr" .* \(did you mean ember\?\)\n$/);
  // Nothing near: the service's words stand alone.
  expect((await speak(['hi', '--voice', 'zzzzzz', '--model', 'local/tts', '-o', join(t.dir, 'd.mp3')])).stderr).toMatch(/\(alloy, ember, sage\)\n$/);
});

it('an empty stdin for a flag read from @- says stdin was empty, not that "-" is', async () => {
  expect(await run(['chat', '-s', '@-', '--model', 'local/echo', 'hi'], {}, '')).toMatchObject({ code: 2, stdout: '', stderr: 'error: --system @-: stdin was empty (pipe the text in, or give --system TEXT)\n' });
  expect((await run(['responses', '--instructions', '@-', '--model', 'local/echo', 'hi'], {}, '\n')).stderr).toBe('error: --instructions @-: stdin held only blank lines (pipe the text in, or give --instructions TEXT)\n');
  expect(t.requests().length).toBe(0);
});

it('a listed model sent to the wrong command is named as the kind it is, with the command that takes it', async () => {
  expect(await run(['chat', '--model', 'local/embed', 'hi'])).toMatchObject({ code: 2, stdout: '', stderr: 'error: POST /api/v1/chat/completions: 400 Bad Request: local/embed is an embedding model, not a chat model; /v1/embeddings serves it (router embed takes it)\n' });
  expect((await run(['embed', '--model', 'local/echo', 'hi'])).stderr).toMatch(/local\/echo is a chat model, not an embedding model; \/v1\/chat\/completions serves it \(router chat or router responses takes it\)\n$/);
  expect((await run(['responses', 'hi'], { ROUTER_MODEL: 'local/tts' })).stderr).toMatch(/local\/tts is a speech model, not a chat model; \/v1\/audio\/speech serves it \(from ROUTER_MODEL; router speak takes it\)\n$/);
  // Not listed at all: the list, as before.
  expect((await run(['chat', '--model', 'nobody/nothing', 'hi'])).stderr).toMatch(/nobody\/nothing is not a valid model ID \(the list: router models\)\n$/);
});

it('router api with the root\'s /api given again: the 404 says the path to give', async () => {
  const r = await run(['api', '/api/v1/models']);
  expect(r.code).toBe(5);
  expect(r.stderr).toBe(`error: GET /api/api/v1/models: 404 Not Found: No route for GET /api/v1/models (the API root ${t.apiRoot} ends in /api already: give the path as /v1/models)\n`);
  expect((await run(['api', '/v1/nothing'])).stderr).toBe('error: GET /api/v1/nothing: 404 Not Found: No route for GET /v1/nothing\n');
  // Was: the 404 alone, for the path as the service's reference names it below /v1.
  expect((await run(['api', '/models'])).stderr).toBe('error: GET /api/models: 404 Not Found: No route for GET /models (the service\'s paths begin with /v1: give the path as /v1/models)\n');
  // The deployed service's batches sit below /beta: a 404 there (no such batch) is not a path without /v1.
  expect((await run(['api', '/beta/batches/batch_none'])).stderr).not.toContain('/v1');
});

it('a mistyped role name gets a guess, as other names do', async () => {
  const roles = { ROUTER_CONFIG_DIR: join(t.dir, 'roles-config') };
  expect((await run(['roles', 'save', 'terse', '--system', 'Answer in one line.', '--model', 'local/echo'], roles)).code).toBe(0);
  expect(await run(['chat', '--role', 'tesre', 'hi'], roles)).toMatchObject({ code: 2, stdout: '', stderr: 'error: no role "tesre" (did you mean terse?); the roles are: terse\n' });
  expect((await run(['roles', 'show', 'trese'], roles)).stderr).toBe('error: no role "trese" (did you mean terse?); the roles are: terse\n');
  expect((await run(['roles', 'show', 'zzzzzz'], roles)).stderr).toBe('error: no role "zzzzzz"; the roles are: terse\n');
});

it('batch create --dry-run piped says it is a dry run, as batch run --dry-run does', async () => {
  const file = join(t.dir, 'dry.jsonl');
  writeFileSync(file, `${JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'x' }] } })}\n`);
  const r = await run(['batch', 'create', file, '--model', 'local/echo', '--dry-run']);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^cost bound: local\/echo: 1 request, at most .*\ndry run: 1 request to \/v1\/chat\/completions with local\/echo checked; nothing was sent\n$/);
  expect(t.requests().filter((q) => q.method === 'POST')).toEqual([]);
});

it('a switch variable set to a value router reads as off says so', async () => {
  const r = await run(['chat', '--model', 'local/echo', 'hi'], { ROUTER_NO_STDIN: 'on', ROUTER_NO_LOG: 'maybe', ROUTER_NO_INPUT: '0' });
  expect(r).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(r.stderr).toBe('note: ROUTER_NO_LOG="maybe" is read as off (1, true or yes turns it on)\nnote: ROUTER_NO_STDIN="on" is read as off (1, true or yes turns it on)\n');
  expect((await run(['chat', '--model', 'local/echo', 'hi'], { ROUTER_NO_STDIN: 'YES', ROUTER_NO_LOG: 'false', ROUTER_NO_INPUT: '' })).stderr).toBe('');
});

it('a switch variable with spaces around its value is read as the value, as other ROUTER_* ones are', async () => {
  const state = { ROUTER_STATE_DIR: join(t.dir, 'spaced-switch-state') };
  const r = await run(['chat', '--model', 'local/echo', 'hi'], { ...state, ROUTER_NO_LOG: ' yes ', ROUTER_NO_STDIN: ' 1 ' }, 'from stdin');
  expect(r).toMatchObject({ code: 0, stdout: 'hi\n', stderr: '' });
  expect(JSON.parse((await run(['usage', '--json'], state)).stdout).rows).toEqual([]);
});

it('a prompt that starts with "-" is refused naming the -- that lets it through', async () => {
  expect(await run(['chat', '--model', 'local/echo', '-5 degrees outside?'])).toMatchObject({ code: 2, stdout: '', stderr: 'error: unknown option \'-5 degrees outside?\' (text that starts with "-" goes after --, as in router chat -- \'-5 degrees outside?\'); see "router chat --help"\n' });
  expect((await run(['embed', '--model', 'local/embed', "--it's text"])).stderr).toBe('error: unknown option \'--it\'s text\' (text that starts with "-" goes after --, as in router embed -- \'--it\'\\\'\'s text\'); see "router embed --help"\n');
  expect(await run(['chat', '--model', 'local/echo', '--', '-5 degrees outside?'])).toMatchObject({ code: 0, stdout: '-5 degrees outside?\n' });
  // router itself takes no text: no -- to point to.
  expect((await run(['-5 degrees outside?'])).stderr).toBe('error: unknown option \'-5 degrees outside?\'; see "router --help"\n');
  // A mistyped flag is still a flag.
  expect((await run(['chat', '--bogus', 'x'])).stderr).toBe('error: unknown option \'--bogus\'; see "router chat --help"\n');
});

it('usage --since a date to come is refused, not a total of nothing', async () => {
  expect(await run(['usage', '--since', '2099-01-01'])).toMatchObject({ code: 2, stdout: '', stderr: 'error: --since 2099-01-01 is in the future: give a date that has passed, or a span (30m, 12h, 7d, 2w)\n' });
  expect((await run(['usage', '--since', '2020-01-01'])).code).toBe(0);
});
