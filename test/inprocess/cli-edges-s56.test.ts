import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { runInProcess } from '../support/inprocess.js';

// The CLI's edges closing note 9 left ("CLI", "Keys and activity"): each said in one line with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const onTerminal = (args: string[], env: Record<string, string> = {}) => runInProcess(args, { env: { ...t.env, NO_COLOR: '1', ...env }, tty: { stdout: true } });

it('a conversation id that starts with "-": taken as --conversation\'s value, named with -- where it is an argument', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'dash-ids') };
  // commander gives an option its value even when it starts with "-": no -- needed.
  expect(await run(['chat', '-m', 'local/echo', '--conversation', '-abc', 'hi'], env)).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(await run(['chat', '-m', 'local/echo', '--conversation=-abc', 'again'], env)).toMatchObject({ code: 0, stdout: 'again\n' });
  // As an argument it reads as flags: the error names the way out (was: unknown option '-abc', and nothing more).
  expect(await run(['conversations', 'show', '-abc'], env)).toMatchObject({ code: 2, stdout: '', stderr: 'error: unknown option \'-abc\' (an id that starts with "-" goes after --, as in router conversations show -- -abc); see "router conversations show --help"\n' });
  expect((await run(['conversations', 'delete', '-x'], env)).stderr).toBe('error: unknown option \'-x\' (an id that starts with "-" goes after --, as in router conversations delete -- -x); see "router conversations delete --help"\n');
  // The guess for a near id gives it in the form that runs (was: "did you mean -abc?", which does not).
  expect(await run(['conversations', 'show', 'abc'], env)).toMatchObject({ code: 5, stderr: 'error: no conversation abc (did you mean -abc? as in router conversations show -- -abc) (router conversations list shows them)\n' });
  expect((await run(['conversations', 'show', '--', '-abc'], env)).stdout).toBe('user: hi\n\nassistant: hi\n\nuser: again\n\nassistant: again\n');
  // A mistyped flag still gets its guess; a flag of the command still works.
  expect((await run(['conversations', 'show', '--jsn', 'x'], env)).stderr).toBe('error: unknown option \'--jsn\' (did you mean --json?); see "router conversations show --help"\n');
  expect((await run(['conversations', 'delete', '--', '-abc'], env)).code).toBe(0);
  expect((await run(['conversations', 'list'], env)).stdout).not.toMatch(/^-abc\t/m);
});

it('config set refuses a model id of 5,000 characters, control characters in any setting, more text than a setting needs: exit 2, nothing written', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-bounds') };
  const file = join(env.ROUTER_CONFIG_DIR, 'config.json');
  const long = `x/${'y'.repeat(4998)}`;
  // Was: set, exit 0.
  expect(await run(['config', 'set', 'model', long], env)).toMatchObject({ code: 2, stdout: '', stderr: 'error: model is 5000 characters long: a model id (<author>/<slug>) has at most 256\n' });
  expect(await run(['config', 'set', 'speech_model', 'local/\u0007tts'], env)).toMatchObject({ code: 2, stderr: 'error: speech_model must look like <author>/<slug>, got "local/\\u0007tts"\n' });
  // The same rule for a --model flag.
  expect((await run(['chat', '--model', `local/${'e'.repeat(300)}`, 'hi'])).code).toBe(2);
  // Was: api_root kept with a BEL in it.
  expect((await run(['config', 'set', 'api_root', 'http://x\u0007'], env)).stderr).toBe('error: api_root holds a control character (\\u0007 at 9): give it without\n');
  expect((await run(['config', 'set', 'app_title', 'My\u001b[2Japp'], env)).code).toBe(2);
  expect((await run(['config', 'set', 'voice', 'v'.repeat(5000)], env)).stderr).toBe('error: voice is 5000 characters long, more than the 4096 a setting may hold\n');
  expect(existsSync(file)).toBe(false);
  // mcp holds one server a line; a model id of 256 characters is one.
  expect((await run(['config', 'set', 'mcp', 'npx one\nnpx two'], env)).code).toBe(0);
  expect((await run(['config', 'set', 'model', `x/${'y'.repeat(254)}`], env)).code).toBe(0);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ profiles: { default: { mcp: 'npx one\nnpx two', model: `x/${'y'.repeat(254)}` } } });
});

it('a budget finer than the ten decimals costs are counted to keeps ten, never more than given; get and the messages agree', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-decimals') };
  // Was: kept whole, then shown cut to ten decimals in the budget's messages (and, for a while, refused).
  expect(await run(['config', 'set', 'daily_budget', '0.12345678901234'], env)).toMatchObject({ code: 0, stderr: 'note: daily_budget kept as 0.123456789: costs are counted to ten decimals\n' });
  expect((await run(['config', 'get', 'daily_budget'], env)).stdout).toBe('0.123456789\n');
  // A computed amount's float noise is the amount meant, from the environment as from a flag.
  const noisy = await run(['chat', '-m', 'local/lorem', '--max-tokens', '200', 'hi'], { ...env, ROUTER_DAILY_BUDGET: '0.0000000000999', ROUTER_STATE_DIR: join(t.dir, 'decimals-noise') });
  expect(noisy).toMatchObject({ code: 4 });
  expect(noisy.stderr).toMatch(/^error: daily_budget of \$0\.0+ reached \(ROUTER_DAILY_BUDGET\)/);
  expect((await run(['chat', '-m', 'local/echo', '--max-cost', '0.0016875000000000002', 'hi'])).code).toBe(0);
  // Zeros after the last digit add no precision; ten decimals are kept and shown as given.
  expect((await run(['config', 'set', 'daily_budget', '0.500000000000'], env)).code).toBe(0);
  expect((await run(['config', 'set', 'monthly_budget', '0.0000000001'], env)).code).toBe(0);
  expect((await run(['config', 'get', 'monthly_budget'], env)).stdout).toBe('0.0000000001\n');
  expect((await run(['chat', '-m', 'local/lorem', 'hi'], { ...env, ROUTER_STATE_DIR: join(t.dir, 'decimals-state') })).stderr).toMatch(/over what is left of monthly_budget \(\$0\.0000000001, /);
});

it('speak --usage: a key that may not read generations (403) is said so, not sent to usage --reconcile', async () => {
  await t.admin('faults', { faults: ['403,path=/generation'] });
  try {
    const r = await run(['speak', 'hello', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'denied.mp3'), '--usage'], { ROUTER_STATE_DIR: join(t.dir, 'speak-403'), ROUTER_MANAGEMENT_KEY: t.managementKey });
    expect(r.code, r.stderr).toBe(0);
    // Was: "its cost is not known yet (router usage --reconcile asks the service)", which would be refused alike.
    expect(r.stderr).toMatch(/^usage: \d+ bytes of audio for 5 characters; its cost is not known: this key may not read generations \(403\), nor can router usage --reconcile with it \(router generation gen-\S+ with a key that may\)$/m);
  } finally {
    await t.admin('faults', { faults: [] });
  }
});

it('conversations list and batch jobs: a table on a terminal, as keys list and usage; tab-separated lines piped, as before', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'tables') };
  await run(['chat', '-m', 'local/echo', '--conversation', 'first', 'hello'], env);
  const piped = await run(['conversations', 'list'], env);
  expect(piped.stdout).toMatch(/^first\t\S+Z\t1\tlocal\/echo\thello\n$/);
  const tty = await onTerminal(['conversations', 'list'], env);
  expect(tty.stdout).toMatch(/^id +updated +turns +model +title\n/);
  expect(tty.stdout).toMatch(/^first +\S+Z +1 +local\/echo +hello$/m);
  const jsonl = join(t.dir, 'jobs.jsonl');
  writeFileSync(jsonl, '{"custom_id":"a","body":{"messages":[{"role":"user","content":"hi"}]}}\n');
  expect((await run(['batch', 'run', jsonl, '--model', 'local/echo'], env)).code).toBe(0);
  const lines = (await run(['batch', 'jobs'], env)).stdout;
  expect(lines).toMatch(/^job_\S+\t\S[^\t]*\t[01]\/1\t\d+\/\d+\/1\t\d+\.\d{6}\t\S+Z\t\S*jobs\.jsonl\n$/);
  const table = (await runInProcess(['batch', 'jobs'], { env: { ...t.env, NO_COLOR: '1', ...env }, tty: { stdout: true }, columns: 160 })).stdout;
  expect(table).toMatch(/^id +state +shards ended +completed\/failed\/requests +cost +created +input\n/);
  expect(table).toContain(lines.split('\t')[0]);
});

it('conversations list and batch jobs on a narrow terminal: the title or input cut with "…", no line wider than the terminal', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'narrow') };
  const title = 'a long first prompt that goes on and on well past the width';
  await run(['chat', '-m', 'local/echo', '--conversation', 'long', title], env);
  const at = async (columns: number, args: string[]) =>
    (await runInProcess(args, { env: { ...t.env, NO_COLOR: '1', ...env }, tty: { stdout: true }, columns })).stdout.trimEnd().split('\n');
  const narrow = await at(70, ['conversations', 'list']);
  // Before: 105 characters a line on a 70-column terminal, each line wrapped in two.
  expect(Math.max(...narrow.map((l) => l.length))).toBeLessThanOrEqual(70);
  expect(narrow.join('\n')).toMatch(/^long +.* a long [^\n]*…$/m);
  expect((await at(200, ['conversations', 'list'])).join('\n')).toMatch(new RegExp(` {2}${title}$`, 'm'));
  // Cut between letters: before, half an emoji (a UTF-16 unit) was printed, shown as �, at one width of two.
  await run(['chat', '-m', 'local/echo', '--conversation', 'party', '🎉'.repeat(40)], env);
  for (const columns of [70, 71]) expect((await at(columns, ['conversations', 'list'])).join('\n')).toMatch(/^party +.* (🎉)+…$/mu);
  const jsonl = join(t.dir, 'a-folder-with-a-rather-long-name-for-its-batch-input-file.jsonl');
  writeFileSync(jsonl, '{"custom_id":"a","body":{"messages":[{"role":"user","content":"hi"}]}}\n');
  expect((await run(['batch', 'run', jsonl, '--model', 'local/echo'], env)).code).toBe(0);
  const jobs = await at(140, ['batch', 'jobs']);
  expect(Math.max(...jobs.map((l) => l.length))).toBeLessThanOrEqual(140);
  expect(jobs.join('\n')).toMatch(/…/);
});

it('a halt in a streamed --jq ends the output there, as jq reads no more input; halt_error(0) too, with its text said once', async () => {
  const chat = (filter: string) => run(['chat', '-m', 'local/echo', '--stream', '--json', '--jq', filter, 'hello there friend, how are you']);
  const all = (await chat('.object')).stdout.trim().split('\n');
  expect(all.length).toBeGreaterThan(2);
  // Was: a line for every chunk (each chunk's run halted, the next ran all the same).
  expect(await chat('.object, halt')).toMatchObject({ code: 0, stdout: 'chat.completion.chunk\n', stderr: '' });
  expect(await chat('"bye\\n" | halt_error(0)')).toMatchObject({ code: 0, stdout: '', stderr: 'bye\n' });
  // A definition first and a comment last are the filter's as before; a non-zero halt_error is the exit status, as it was.
  expect(await chat('def kind: .object; kind, halt # stop here')).toMatchObject({ code: 0, stdout: 'chat.completion.chunk\n' });
  expect(await chat('.object, ("no\\n" | halt_error(4))')).toMatchObject({ code: 4, stdout: 'chat.completion.chunk\n', stderr: 'no\n' });
  // A filter that never halts runs on every chunk, its stderr as said.
  expect(await chat('.object | stderr | empty')).toMatchObject({ code: 0, stdout: '', stderr: 'chat.completion.chunk'.repeat(all.length) });
});

it('keys.delete refuses an answer that does not say deleted: true (the library and keys delete), exit 7', async () => {
  const { startFixtureServer } = await import('../support/fixture-server.js');
  const { ProtocolError, RouterClient } = await import('../../src/client/index.js');
  const hash = 'a'.repeat(64);
  const server = await startFixtureServer({ [`DELETE /api/v1/keys/${hash}`]: { body: { deleted: false } }, [`DELETE /api/v1/keys/${'b'.repeat(64)}`]: { body: {} }, [`DELETE /api/v1/keys/${'c'.repeat(64)}`]: { body: { deleted: true } } });
  const client = new RouterClient({ apiKey: 'sk-test-mgmt-000000', apiRoot: server.apiRoot, maxRetries: 0 });
  try {
    // Was: resolved, the key said gone while the service kept it.
    const err = await client.keys.delete(hash).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toBe(`the service did not say key ${hash} was deleted ("deleted" is false): it may still work`);
    await expect(client.keys.delete('b'.repeat(64))).rejects.toThrow('("deleted" is missing)');
    await expect(client.keys.delete('c'.repeat(64))).resolves.toBeUndefined();
    const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_MANAGEMENT_KEY: 'sk-test-mgmt-000000', ROUTER_CONFIG_DIR: join(t.dir, 'no-config'), ROUTER_NO_LOG: '1' };
    expect(await runInProcess(['--max-retries', '0', 'keys', 'delete', hash], { env })).toMatchObject({ code: 7, stdout: '', stderr: `error: the service did not say key ${hash} was deleted ("deleted" is false): it may still work\n` });
  } finally {
    await client.close();
    await server.close();
  }
  // The emulator says it: deleted as before.
  const made = JSON.parse((await run(['keys', 'create', 'short-lived', '--json'], { ROUTER_MANAGEMENT_KEY: t.managementKey })).stdout);
  expect((await run(['keys', 'delete', made.data.hash], { ROUTER_MANAGEMENT_KEY: t.managementKey })).code).toBe(0);
});

it('key hashes complete in the shell (keys get, update, delete), with a management key; without one nothing, silently', async () => {
  const mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  const made = JSON.parse((await run(['keys', 'create', 'to-complete', '--json'], mgmt)).stdout);
  // Was: no completion kind for hashes (the scripts offered nothing after keys get).
  const hashes = await run(['__complete', 'key-hashes'], mgmt);
  expect(hashes).toMatchObject({ code: 0, stderr: '' });
  expect(hashes.stdout.trim().split('\n')).toContain(made.data.hash);
  expect(await run(['__complete', 'key-hashes'])).toMatchObject({ code: 0, stdout: '', stderr: '' });
  // With only an API key, kept by a command (a password manager that may prompt): neither run nor sent on a Tab.
  const config = join(t.dir, 'complete-no-mgmt');
  const ran = join(t.dir, 'api-key-command-ran');
  const cmd = `touch '${ran}'; echo ${t.env.ROUTER_API_KEY}`;
  expect((await run(['config', 'set', 'api_key_command', cmd], { ROUTER_CONFIG_DIR: config })).code).toBe(0);
  const onlyApi = { ROUTER_CONFIG_DIR: config, ROUTER_API_KEY: '' };
  expect(await run(['__complete', 'key-hashes'], onlyApi)).toMatchObject({ code: 0, stdout: '', stderr: '' });
  // Before: the command ran and its key was sent to /keys (refused there, nothing said).
  expect(existsSync(ran)).toBe(false);
  expect((await run(['__complete', 'batch-ids'], onlyApi)).code).toBe(0);
  expect(existsSync(ran)).toBe(false); // nor for batch ids (cli-edges-s57: no key command runs on a Tab)
  const bash = (await run(['completion', 'bash'])).stdout;
  for (const sub of ['get', 'update', 'delete']) expect(bash).toMatch(new RegExp(`'keys ${sub}'\\) subs=[^\\n]*arg='dynamic:key-hashes'`));
});
