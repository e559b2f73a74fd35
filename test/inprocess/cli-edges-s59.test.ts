import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { typedRepl } from '../support/typed-repl.js';

// The CLI's small edges closing note 12 left (task c5): each said in one line, with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

/** `router chat -i --model local/echo` on a terminal: each line typed once the prompt before it shows, then /exit (exit 0); its stderr. */
async function replSession(env: Record<string, string | undefined>, lines: string[]): Promise<string> {
  const r = await typedRepl(env, lines, { args: ['--model', 'local/echo'] });
  expect(r.code).toBe(0);
  return r.stderr;
}

it('-cq: short flags run together work wherever each is valid, the program\'s (-q) or the command\'s (-c, -m)', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'clusters') };
  expect((await run(['chat', '-m', 'local/echo', '--conversation', 'clus', 'hi'], env)).code).toBe(0);
  // Was: "error: unknown option '-q'; see "router chat --help"" (commander reads a cluster only as far as the command knows).
  expect(await run(['chat', '-cq', '-m', 'local/echo', 'one'], env)).toMatchObject({ code: 0, stdout: 'one\n', stderr: '' });
  expect(await run(['chat', '-cqm', 'local/echo', 'two'], env)).toMatchObject({ code: 0, stdout: 'two\n', stderr: '' });
  expect(await run(['chat', '-cqmlocal/echo', 'three'], env)).toMatchObject({ code: 0, stdout: 'three\n', stderr: '' });
  expect(await run(['chat', '-m', 'local/echo', '-qc', 'four'], env)).toMatchObject({ code: 0, stdout: 'four\n', stderr: '' });
  expect((await run(['conversations', 'show', 'clus'], env)).stdout.match(/^user: /gm)?.length).toBe(5);
  // The value of a flag is never split: -s -cq is a system message "-cq".
  const sys = await run(['chat', '-m', 'local/echo', '--json', '-s', '-cq', 'five'], env);
  expect(sys.code, sys.stderr).toBe(0);
  // A letter no command on the way knows is still refused, by the word as given.
  expect(await run(['chat', '-cz', 'six'], env)).toMatchObject({ code: 2, stderr: "error: unknown option '-z'; see \"router chat --help\"\n" });
});

it('-qp work: global flags run together, the last taking a value, go before the command as apart (-q -p work)', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'qp'), ROUTER_MODEL: '' };
  expect((await run(['config', 'set', 'model', 'local/echo', '--profile', 'work'], env)).code).toBe(0);
  // Was: exit 2, "unknown option '-m'" (work was read as the command, chat left undefined).
  expect(await run(['-qp', 'work', 'chat', '-m', 'local/echo', 'one'], env)).toMatchObject({ code: 0, stdout: 'one\n', stderr: '' });
  expect(await run(['-qp', 'work', 'chat', 'two'], env)).toMatchObject({ code: 0, stdout: 'two\n', stderr: '' });
  expect(await run(['-qp', 'work', 'config', 'get', 'model', '--json'], env)).toMatchObject({ code: 0, stdout: '{"profile":"work","setting":"model","value":"local/echo"}\n' });
  // -pq is -p with the value "q", as ever.
  expect((await run(['-pq', 'chat', 'three'], env)).stderr).toMatch(/profile "q"/);
});

/** `router ARGS` with stdout and stderr on one terminal-like sink: what each wrote, in the order written. */
async function interleaved(args: string[]): Promise<{ code: number; writes: string[] }> {
  const writes: string[] = [];
  const sink = (name: string) => Object.assign(new Writable({ write: (c: Buffer, _e, done) => (writes.push(`${name}: ${c.toString().trim()}`), done()) }), { columns: 80 });
  const env: NodeJS.ProcessEnv = { ...process.env, ...t.env, FORCE_COLOR: undefined };
  const code = await main(['node', 'router', ...args], { stdin: Readable.from([Buffer.alloc(0)]), stdout: sink('out'), stderr: sink('err'), env, tty: { stdin: false, stdout: false, stderr: false } });
  return { code, writes: writes.filter((w) => !/: $/.test(w)) };
}

it('--usage is said after the answer it counts, --jq and --json alike (was: before it, on a shared terminal)', async () => {
  const usage = /^err: usage: /;
  for (const args of [
    ['chat', '--model', 'local/echo', '--json', '--jq', '.choices[0].message.content', '--usage', 'hi'],
    ['chat', '--model', 'local/echo', '--stream', '--json', '--jq', '.object', '--usage', 'hi'],
    ['responses', '--model', 'local/echo', '--jq', '.output_text // .status', '--usage', 'hi'],
    ['embed', '--model', 'local/embed', '--json', '--usage', 'hi'],
    ['embed', '--model', 'local/embed', '--jq', '.model', '--usage', 'hi'],
  ]) {
    const { code, writes } = await interleaved(args);
    expect(code, writes.join('\n')).toBe(0);
    expect(writes.filter((w) => usage.test(w)).length, args.join(' ')).toBe(1);
    expect(writes.at(-1), args.join(' ')).toMatch(usage);
    expect(writes.some((w) => w.startsWith('out: ')), args.join(' ')).toBe(true);
  }
});

it('config list and get hide the password of a URL anywhere in a value, as roles show does (one function)', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-mcp-urls') };
  const mcp = 'http://me:s3cret@127.0.0.1:9/mcp\nnpx srv --url=https://u:p%40ss@h.example/x';
  expect((await run(['config', 'set', 'mcp', mcp], env)).code).toBe(0);
  const shown = 'http://***@127.0.0.1:9/mcp\nnpx srv --url=https://***@h.example/x';
  // Was: the second line as written, its password and all (hidden only where a line starts with a URL).
  expect(await run(['config', 'get', 'mcp'], env)).toMatchObject({ code: 0, stdout: `${shown}\n` });
  const list = await run(['config', 'list', '--json'], env);
  expect(list.code, list.stderr).toBe(0);
  expect(list.stdout).not.toMatch(/s3cret|p%40ss/);
  expect(JSON.stringify(JSON.parse(list.stdout))).toContain(JSON.stringify(shown).slice(1, -1));
  const text = await run(['config', 'list'], env);
  expect(text.stdout).not.toMatch(/s3cret|p%40ss/);
  const role = await run(['roles', 'save', 'remote', '--system', 'terse', '--mcp', 'http://me:s3cret@127.0.0.1:9/mcp', '--mcp', 'npx srv --url=https://u:p%40ss@h.example/x'], env);
  expect(role.code, role.stderr).toBe(0);
  expect((await run(['roles', 'show', 'remote'], env)).stdout).toContain('  - npx srv --url=https://***@h.example/x\n');
});

it('completion never reads a key from the keychain on a Tab: batch ids from the local index, models from the kept list, no key hashes', async () => {
  const config = join(t.dir, 'complete-keychain');
  const state = join(t.dir, 'complete-keychain-state');
  mkdirSync(config, { recursive: true });
  // Keys kept in the keychain (as login puts them where there is one): the file names only their accounts.
  writeFileSync(join(config, 'config.json'), JSON.stringify({ current: 'default', profiles: { default: { api_root: t.apiRoot, api_key_keychain: 'router-test-nowhere-api', management_key_keychain: 'router-test-nowhere-mgmt' } } }));
  const requests = join(t.dir, 'complete-keychain.jsonl');
  writeFileSync(requests, JSON.stringify({ custom_id: 'c', body: { model: 'local/echo', messages: [{ role: 'user', content: 'c' }] } }) + '\n');
  const batch = JSON.parse((await run(['batch', 'create', requests, '--json'], { ROUTER_STATE_DIR: state })).stdout).id as string;
  expect((await run(['models'], { ROUTER_STATE_DIR: state })).code).toBe(0);
  const inKeychain = { ROUTER_CONFIG_DIR: config, ROUTER_STATE_DIR: state, ROUTER_API_KEY: '', ROUTER_MANAGEMENT_KEY: '', ROUTER_API_ROOT: '', ROUTER_KEYCHAIN: '' };
  const before = t.requests().length;
  // Was: the keychain read on each Tab (a native call; a locked keyring prompts), and here, where it cannot be read, nothing completed.
  expect(await run(['__complete', 'batch-ids'], inKeychain)).toMatchObject({ code: 0, stdout: `${batch}\n`, stderr: '' });
  const models = await run(['__complete', 'models'], inKeychain);
  expect(models).toMatchObject({ code: 0, stderr: '' });
  expect(models.stdout.split('\n')).toContain('local/lorem');
  expect(await run(['__complete', 'key-hashes'], inKeychain)).toMatchObject({ code: 0, stdout: '', stderr: '' });
  expect(t.requests().length).toBe(before);
});

it('/role with an unknown name is said as the REPL\'s other errors are, "error: /role: …", and the session goes on', async () => {
  const env = { ...t.env, ROUTER_CONFIG_DIR: join(t.dir, 'repl-role'), NO_COLOR: '1' };
  expect((await run(['roles', 'save', 'pirate', '--system', 'Talk like a pirate.'], env)).code).toBe(0);
  const stderr = await replSession(env, ['/role pirat']);
  // Was: "error: no role "pirat" …", the command it came from not named.
  expect(stderr).toMatch(/^error: \/role: no role "pirat" \(did you mean pirate\?\); the roles are: pirate$/m);
});

it('/save that cannot write is said as the REPL\'s other errors are, "error: /save: …", and the session goes on', async () => {
  const env = { ...t.env, ROUTER_CONFIG_DIR: join(t.dir, 'repl-save'), NO_COLOR: '1' };
  const stderr = await replSession(env, [`/save ${t.dir}`, `/save! ${join(t.dir, 'no-such-folder', 'c.json')}`]);
  // Was: "error: cannot write …", while /save's own refusal, /model's and /role's name the command.
  const errors = stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(errors).toEqual([`error: /save: cannot write ${t.dir}: is a folder`, `error: /save!: cannot write ${join(t.dir, 'no-such-folder', 'c.json')}: folder ${join(t.dir, 'no-such-folder')} does not exist`]);
});

it('/save ~/FILE in chat -i saves in the home folder, as a shell would take ~ (no shell reads that line)', async () => {
  const home = join(t.dir, 'tilde-home');
  mkdirSync(home);
  const env = { ...t.env, HOME: home, ROUTER_CONFIG_DIR: join(t.dir, 'repl-tilde'), NO_COLOR: '1' };
  const stderr = await replSession(env, ['/save ~/talk.json']);
  // Was: "error: cannot write ~/talk.json: folder ~ does not exist".
  expect(stderr).toMatch(/^saved 0 messages to ~\/talk\.json$/m);
  expect(JSON.parse(readFileSync(join(home, 'talk.json'), 'utf8'))).toMatchObject({ model: 'local/echo', messages: [] });
});
