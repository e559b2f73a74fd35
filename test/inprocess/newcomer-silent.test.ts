import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { unknownReplCommand } from '../../src/cli/commands/chat/repl-checks.js';
import { ENV_NAMES } from '../../src/config/env-names.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Issue 46, round 3: what was still cut, dropped or misread with nothing said, found from the installed package.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

const REQUESTS = ['a', 'b', 'c'].map((w, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: w }] } })).join('\n') + '\n';

it('--json with a mistyped field where the command takes words: refused with a guess, never a search that finds nothing', async () => {
  await run(['chat', '--model', 'local/echo', 'a turn for the list']);
  const list = await run(['conversations', 'list', '--json', 'id,tunrs']);
  expect(list).toMatchObject({ code: 2, stdout: '' });
  expect(list.stderr).toMatch(/^error: unknown JSON field "tunrs" \(did you mean turns\?\); fields of "conversations list": /);
  const models = await run(['models', '--json', 'id,pric']);
  expect(models.stderr).toMatch(/^error: unknown JSON field "pric" \(did you mean pricing\?\)/);
  // One word stays a search word (it may be one), and a note says how it was read.
  const one = await run(['conversations', 'list', '--json', 'idd']);
  expect(one).toMatchObject({ code: 0, stdout: '[]\n' });
  expect(one.stderr).toBe('note: "idd" after --json is read as an argument of "conversations list", not as a field (did you mean id?); fields go as --json=FIELDS\n');
  // A prompt after --json that looks like no field: nothing said; fields that are right still work.
  const prompt = await run(['chat', '--model', 'local/echo', '--json', 'hello']);
  expect(prompt).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse((await run(['conversations', 'list', '--json', 'id,turns'])).stdout)[0]).toEqual({ id: expect.any(String), turns: 1 });
});

it('batch list piped or as JSON lines: a page that is not the last says so on stderr (--json holds has_more itself)', async () => {
  const file = join(t.dir, 'three.jsonl');
  writeFileSync(file, REQUESTS);
  for (let i = 0; i < 3; i++) expect((await run(['batch', 'create', file, '--model', 'local/echo'])).code).toBe(0);
  const tsv = await run(['batch', 'list', '--limit', '2']);
  expect(tsv.stdout.trim().split('\n')).toHaveLength(2);
  expect(tsv.stderr).toMatch(/^more: the next page with --after batch_\w+, every page with --all\n$/);
  const jsonl = await run(['batch', 'list', '--limit', '2', '--jsonl']);
  expect(jsonl.stderr).toMatch(/^more: the next page with --after batch_\w+/);
  const json = await run(['batch', 'list', '--limit', '2', '--json']);
  expect(json.stderr).toBe('');
  expect(JSON.parse(json.stdout).has_more).toBe(true);
  expect((await run(['batch', 'list', '--limit', '2', '--all'])).stderr).toBe('');
  expect((await run(['batch', 'list', '--limit', '3'])).stderr).toBe('');
});

it('a tool that fails, or whose output is cut, is said on stderr even piped, not only to the model', async () => {
  const tools = (name: string, command: string) => {
    const path = join(t.dir, `${name}.json`);
    writeFileSync(path, JSON.stringify([{ type: 'function', name, parameters: { type: 'object', properties: {} }, command }]));
    return path;
  };
  const failing = await run(['chat', '--model', 'local/tools', '--tools', tools('failing', 'echo no network >&2; exit 3'), 'failing']);
  expect(failing).toMatchObject({ code: 0, stderr: 'warning: tool failing failed (exit 3): what it said went to the model\n' });
  expect(failing.stdout).toMatch(/failing answered: the command exited with code 3; stderr:\s+no network/);
  const loud = await run(['chat', '--model', 'local/tools', '--tools', tools('loud', "cat >/dev/null; head -c 3000000 /dev/zero | tr '\\0' a"), 'loud']);
  expect(loud).toMatchObject({ code: 0, stderr: 'warning: tool loud: its output was cut: the model got the first 1,048,576 bytes of 3,000,000\n' });
  const both = await run(['responses', '--model', 'local/tools', '--tools', tools('both', "cat >/dev/null; yes | head -c 1500000 >&2; yes | head -c 1200000; exit 4"), 'both']);
  // (local/tools answers with its results: a 2 MB answer past its length limit, said after these.)
  expect(both.stderr).toContain('warning: tool both failed (exit 4): what it said went to the model\nwarning: tool both: its stderr was cut: the model got the first 1,048,576 bytes of 1,500,000\nwarning: tool both: its output was cut: the model got the first 1,048,576 bytes of 1,200,000\n');
});

it('chat -i: a mistyped slash command gets a guess', () => {
  expect(unknownReplCommand('/modle')).toBe('unknown command /modle (did you mean /model?); /help lists the commands\n');
  expect(unknownReplCommand('/atach')).toMatch(/did you mean \/attach\?/);
  expect(unknownReplCommand('/frobnicate')).toBe('unknown command /frobnicate; /help lists the commands\n');
});

it('batch run --dry-run piped prints a tab-separated line per shard, and its --help names the columns', async () => {
  const file = join(t.dir, 'plan.jsonl');
  writeFileSync(file, REQUESTS);
  const r = await run(['batch', 'run', file, '--model', 'local/echo', '--dry-run']);
  expect(r.code).toBe(0);
  expect(r.stdout.split('\n')[0]!.split('\t')).toHaveLength(8);
  expect((await run(['batch', 'run', '--help'])).stdout.replace(/\s+/g, ' ')).toMatch(/piped, one tab-separated line per shard: shard, lines, requests, bytes, batch, status, completed\/failed\/total, cost/);
});

it('a conversation id close to a kept one: chat says it starts a new one, show and delete guess', async () => {
  expect((await run(['chat', '--conversation', 'tripnotes', '--model', 'local/echo', 'first'])).code).toBe(0);
  const typo = await run(['chat', '--conversation', 'tripnote', '--model', 'local/echo', 'second']);
  expect(typo).toMatchObject({ code: 0, stdout: 'second\n', stderr: 'note: no conversation tripnote yet: this starts it (did you mean tripnotes?)\n' });
  // A new name near none: started without a word, as before.
  expect((await run(['chat', '--conversation', 'groceries', '--model', 'local/echo', 'milk'])).stderr).toBe('');
  expect(await run(['conversations', 'show', 'tripnotess'])).toMatchObject({ code: 5, stderr: 'error: no conversation tripnotess (did you mean tripnotes?) (router conversations list shows them)\n' });
  expect(await run(['conversations', 'delete', 'grocerie'])).toMatchObject({ code: 5, stderr: 'error: no conversation grocerie (did you mean groceries?) (router conversations list shows them)\n' });
  expect((await run(['conversations', 'show', 'zzzzzzzz'])).stderr).toBe('error: no conversation zzzzzzzz (router conversations list shows them)\n');
});

it('config init offers the root of the exports pasted first, and asks again for a model the service does not list', async () => {
  const config = mkdtempSync(join(t.dir, 'init-'));
  const s = testStreams({ env: { ...t.env, ROUTER_CONFIG_DIR: config, ROUTER_API_KEY: '' }, tty: { stdin: true, stderr: true } });
  const stdin = new PassThrough();
  const plain = () => s.stderr().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  const code = main(['node', 'router', 'config', 'init', '--profile', 'fresh'], { ...s.streams, stdin });
  expect(await until(() => plain().includes(`? API root (${t.apiRoot})`))).toBe(true);
  stdin.write('\r');
  expect(await until(() => plain().includes('? API key'))).toBe(true);
  stdin.write(`${t.apiKey}\r`);
  expect(await until(() => plain().includes('? Management key'))).toBe(true);
  stdin.write('\r');
  expect(await until(() => plain().includes('? Default model'))).toBe(true);
  stdin.write('local/lorme\r');
  // (Wrapped at the terminal's width.)
  expect(await until(() => plain().replace(/\s+/g, ' ').includes(`local/lorme is not a model of ${t.apiRoot}: did you mean local/lorem? (router models lists them; empty for none)`))).toBe(true);
  stdin.write('\x7f'.repeat(11) + 'local/lorem\r');
  expect(await code).toBe(0);
  const saved = JSON.parse(readFileSync(join(config, 'config.json'), 'utf8'));
  expect(saved.profiles.fresh).toMatchObject({ api_root: t.apiRoot, model: 'local/lorem' });
});

it('config set model: an id the kept model list does not hold is set, with the nearest said', async () => {
  expect((await run(['models'])).code).toBe(0);
  const typo = await run(['config', 'set', 'model', 'local/lorme', '--profile', 'typo']);
  expect(typo).toMatchObject({ code: 0, stderr: `note: local/lorme is not in the model list of ${t.apiRoot} (did you mean local/lorem?); set all the same\n` });
  expect((await run(['config', 'set', 'model', 'local/lorem', '--profile', 'typo'])).stderr).toBe('');
  // An alias of a listed model is checked by its model, not by its own name.
  expect((await run(['aliases', 'set', 'lor', 'local/lorem'])).code).toBe(0);
  expect(await run(['config', 'set', 'model', 'lor', '--profile', 'typo'])).toMatchObject({ code: 0, stderr: '' });
});

it('text in another encoding is refused naming the byte, where it is and the way to convert it', async () => {
  const r = await t.run(['chat', '--model', 'local/echo'], { input: Buffer.from('caf\xe9\n', 'latin1') });
  expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: stdin is not UTF-8 text (byte 0xE9 at offset 3: text in another encoding converts with iconv, e.g. iconv -f LATIN1 -t UTF-8)\n' });
  const { utf8Text } = await import('../../src/cli/io/utf8.js');
  expect(() => utf8Text(Buffer.from('caf\xe9 au lait\n', 'latin1'), 'stdin')).toThrow('stdin is not UTF-8 text (byte 0xE9 at offset 3: text in another encoding converts with iconv, e.g. iconv -f LATIN1 -t UTF-8)');
  expect(() => utf8Text(Buffer.from([0x61, 0xe2, 0x82]), 'stdin')).toThrow('(byte 0xE2 at offset 1:');
  expect(utf8Text(Buffer.from('café ✓ 𝄞'), 'stdin')).toBe('café ✓ 𝄞');
});

it('a ROUTER_* variable close to one router reads is said to be unread, with the name meant', async () => {
  const r = await run(['chat', '--model', 'local/echo', 'hi'], { ROUTER_MODLE: 'local/lorem', ROUTER_NO_STDN: '1', ROUTER_SOMETHING_ELSE: 'x' });
  expect(r).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(r.stderr).toBe('note: router reads no ROUTER_MODLE: did you mean ROUTER_MODEL? (it is left unread)\nnote: router reads no ROUTER_NO_STDN: did you mean ROUTER_NO_STDIN? (it is left unread)\n');
  // The list is every name the code reads: none is taken for a typo.
  const root = join(import.meta.dirname, '..', '..');
  const read = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (/\.(ts|mjs|cjs)$|^router$/.test(e.name)) for (const m of readFileSync(join(dir, e.name), 'utf8').matchAll(/ROUTER_[A-Z0-9_]+/g)) read.add(m[0]);
    }
  };
  for (const dir of ['src', 'bin', 'scripts']) walk(join(root, dir));
  expect([...read].filter((n) => !(ENV_NAMES as readonly string[]).includes(n))).toEqual([]);
});

it('batch get --watch and batch run --watch piped: a poll that fails and is tried again is said, not only with --verbose', async () => {
  const file = join(t.dir, 'offline.jsonl');
  writeFileSync(file, REQUESTS);
  const id = (await run(['batch', 'create', file, '--model', 'local/echo'])).stdout.trim();
  try {
    await t.admin('faults', { faults: ['reset,times=2,path=/v1/batches,method=GET'] });
    const get = await run(['--max-retries', '0', 'batch', 'get', id, '--watch', '--interval', '50ms', '--offline-timeout', '60']);
    expect(get.code).toBe(0);
    expect(get.stderr).toMatch(new RegExp(`^${id}: .*; polling again in \\d+s$`, 'm'));
    const job = (await run(['batch', 'run', file, '--model', 'local/echo', '--new'])).stdout.trim();
    await t.admin('faults', { faults: ['reset,times=2,path=/v1/batches,method=GET'] });
    const followed = await run(['--max-retries', '0', 'batch', 'run', '--resume', job, '--watch', '--interval', '50ms', '--offline-timeout', '60']);
    expect(followed.code).toBe(0);
    expect(followed.stderr).toMatch(new RegExp(`^${job}: .*; polling again in \\d+s$`, 'm'));
  } finally {
    await t.admin('faults', { faults: [] });
  }
});

it('a transient failure given up on after retries says it was retried, and how to have more', async () => {
  try {
    await t.admin('faults', { faults: ['503,times=3,path=/v1/chat/completions'] });
    const r = await run(['chat', '--model', 'local/echo', 'hi']);
    expect(r).toMatchObject({ code: 7, stdout: '', stderr: 'error: POST /api/v1/chat/completions: 503 Service Unavailable: Injected fault: HTTP 503 (after 2 retries; --max-retries sets how many)\n' });
    await t.admin('faults', { faults: ['503,times=1,path=/v1/chat/completions'] });
    expect((await run(['--max-retries', '0', 'chat', '--model', 'local/echo', 'hi'])).stderr).toBe('error: POST /api/v1/chat/completions: 503 Service Unavailable: Injected fault: HTTP 503\n');
  } finally {
    await t.admin('faults', { faults: [] });
  }
});

it('a search that finds nothing near a model says the one meant; a damaged conversation left out of the list is said piped', async () => {
  const typo = await run(['models', 'lorme']);
  expect(typo).toMatchObject({ code: 1, stdout: '', stderr: 'error: no model matches "lorme" (did you mean local/lorem?)\n' });
  expect(await run(['models', 'lorme', '--json'])).toMatchObject({ code: 1, stdout: '[]\n', stderr: 'error: no model matches "lorme" (did you mean local/lorem?)\n' });
  const state = join(t.dir, 'damaged-state');
  expect((await run(['chat', '--conversation', 'torn', '--model', 'local/echo', 'soon torn'], { ROUTER_STATE_DIR: state })).code).toBe(0);
  writeFileSync(join(state, 'conversations', 'torn.json'), '{"id":"torn"}\n');
  const list = await run(['conversations', 'list'], { ROUTER_STATE_DIR: state });
  expect(list).toMatchObject({ code: 0, stdout: '', stderr: `warning: ${join(state, 'conversations', 'torn.json')} is damaged and left out (router conversations delete torn removes it)\n` });
});

it('a profile named on purpose whose settings the environment goes before: a note names them, piped too', async () => {
  expect((await run(['config', 'set', 'api_root', 'http://127.0.0.1:9/api', '--profile', 'elsewhere'])).code).toBe(0);
  expect((await run(['config', 'set', 'model', 'local/lorem', '--profile', 'elsewhere'])).code).toBe(0);
  const named = await run(['--profile', 'elsewhere', 'chat', 'hi'], { ROUTER_MODEL: 'local/echo' });
  expect(named).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(named.stderr).toBe('note: the environment goes before profile "elsewhere" for api_root (ROUTER_API_ROOT), model (ROUTER_MODEL): unset those to use the profile\'s\n');
  // A refused model is looked up with a second connection: the note is still said once.
  const refused = await run(['--profile', 'elsewhere', 'chat', '--model', 'local/lorme', 'hi'], { ROUTER_MODEL: 'local/echo', ROUTER_MODLE: 'x' });
  expect(refused.code).not.toBe(0);
  expect(refused.stderr.match(/^note: .*$/gm)).toEqual([
    'note: router reads no ROUTER_MODLE: did you mean ROUTER_MODEL? (it is left unread)',
    // --model goes before both: ROUTER_MODEL is no reason the profile's model is not used.
    'note: the environment goes before profile "elsewhere" for api_root (ROUTER_API_ROOT): unset it to use the profile\'s',
  ]);
  const byEnv = await run(['chat', '--model', 'local/echo', 'hi'], { ROUTER_PROFILE: 'elsewhere' });
  expect(byEnv.stderr).toBe('note: the environment goes before profile "elsewhere" for api_root (ROUTER_API_ROOT): unset it to use the profile\'s\n');
  // A setting a typed flag replaces, or one the command never reads, is no reason either.
  // Was: "… for api_root (ROUTER_API_ROOT), voice (ROUTER_VOICE) …" of a speak given --voice, and of every chat.
  expect((await run(['config', 'set', 'voice', 'ember', '--profile', 'elsewhere'])).code).toBe(0);
  const onlyRoot = 'note: the environment goes before profile "elsewhere" for api_root (ROUTER_API_ROOT): unset it to use the profile\'s\n';
  const voiceEnv = { ROUTER_VOICE: 'sage', ROUTER_MANAGEMENT_KEY: t.managementKey, ROUTER_API_ROOT: t.apiRoot };
  const spoken = await run(['--profile', 'elsewhere', 'speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'typed-voice.mp3')], voiceEnv);
  expect(spoken).toMatchObject({ code: 0, stderr: onlyRoot });
  expect(await run(['--profile', 'elsewhere', 'chat', '--model', 'local/echo', 'hi'], voiceEnv)).toMatchObject({ code: 0, stderr: onlyRoot });
  const untyped = await run(['--profile', 'elsewhere', 'speak', 'hi', '--model', 'local/tts', '-o', join(t.dir, 'env-voice.mp3')], voiceEnv);
  expect(untyped.stderr).toBe('note: the environment goes before profile "elsewhere" for api_root (ROUTER_API_ROOT), voice (ROUTER_VOICE): unset those to use the profile\'s\n');
  // Was: chat noted ROUTER_EMBED_MODEL, and embed ROUTER_MODEL, neither of which it reads.
  expect((await run(['config', 'set', 'embed_model', 'local/lorem', '--profile', 'elsewhere'])).code).toBe(0);
  expect((await run(['config', 'set', 'model', 'local/lorem', '--profile', 'elsewhere'])).code).toBe(0);
  const modelsEnv = { ROUTER_EMBED_MODEL: 'local/embed', ROUTER_MODEL: 'local/echo', ROUTER_API_ROOT: t.apiRoot };
  expect(await run(['--profile', 'elsewhere', 'chat', 'hi'], modelsEnv)).toMatchObject({ code: 0, stderr: 'note: the environment goes before profile "elsewhere" for api_root (ROUTER_API_ROOT), model (ROUTER_MODEL): unset those to use the profile\'s\n' });
  expect(await run(['--profile', 'elsewhere', 'embed', '--model', 'local/embed', 'hi'], modelsEnv)).toMatchObject({ code: 0, stderr: onlyRoot });
  expect(await run(['--profile', 'elsewhere', 'embed', 'hi'], modelsEnv)).toMatchObject({ code: 0, stderr: 'note: the environment goes before profile "elsewhere" for api_root (ROUTER_API_ROOT), embed_model (ROUTER_EMBED_MODEL): unset those to use the profile\'s\n' });
  expect((await run(['config', 'unset', 'model', '--profile', 'elsewhere'])).code).toBe(0);
  expect((await run(['config', 'unset', 'embed_model', '--profile', 'elsewhere'])).code).toBe(0);
  // The same value, or a profile not named (the current one): nothing to say. (Last in this file: it changes the current profile.)
  expect((await run(['--profile', 'elsewhere', 'chat', '--model', 'local/echo', 'hi'], { ROUTER_API_ROOT: 'http://127.0.0.1:9/api' })).stderr).not.toMatch(/^note/);
  expect((await run(['config', 'use', 'elsewhere'])).code).toBe(0);
  expect((await run(['chat', '--model', 'local/echo', 'hi'])).stderr).toBe('');
});
