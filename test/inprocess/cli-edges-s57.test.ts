import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { runInProcess } from '../support/inprocess.js';

// The CLI's small edges closing note 10 left ("CLI"): each said in one line, with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('chat -c -abc: -c takes no id; when conversation -abc is kept, the refusal names --conversation -abc', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'continue-id') };
  expect((await run(['chat', '-m', 'local/echo', '--conversation', '-abc', 'hi'], env)).code).toBe(0);
  // Was: -abc read as -a bc, "error: --attach: cannot read bc (no such file or folder)".
  expect(await run(['chat', '-m', 'local/echo', '-c', '-abc', 'again'], env)).toMatchObject({ code: 2, stdout: '', stderr: 'error: -c continues the last conversation and takes no id: -abc reads as flags; to go on with conversation -abc, give --conversation -abc\n' });
  expect((await run(['chat', '-m', 'local/echo', '--continue', '-abc', 'again'], env)).code).toBe(2);
  // A flag after -c is still a flag; -c goes on with the last conversation.
  expect(await run(['chat', '-c', '-mlocal/echo', 'again'], env)).toMatchObject({ code: 0, stdout: 'again\n' });
  expect((await run(['conversations', 'show', '--', '-abc'], env)).stdout).toBe('user: hi\n\nassistant: hi\n\nuser: again\n\nassistant: again\n');
});

/** The generation a streamed call made, as the service keeps it once its charge is settled. */
async function generation(id: string): Promise<Record<string, unknown>> {
  const { vi } = await import('vitest');
  const { SETTLE } = await import('../support/until.js');
  return vi.waitFor(async () => {
    const got = await fetch(`${t.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    if (got.status !== 200) throw new Error(`no generation ${id} yet (${got.status})`);
    return ((await got.json()) as { data: Record<string, unknown> }).data;
  }, SETTLE);
}

const ledger = (state: string) =>
  readFileSync(join(state, 'usage.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

it('a --jq that halts stops the stream there: the service charges what it wrote, the ledger keeps the id for --reconcile', async () => {
  for (const command of ['chat', 'responses']) {
    const state = join(t.dir, `halt-${command}`);
    const r = await run([command, '-m', 'local/lorem', '--stream', '--json', '--jq', 'select(.id // .response.id) | (.id // .response.id), halt', '20000 words'], { ROUTER_STATE_DIR: state });
    expect(r, command).toMatchObject({ code: 0, stderr: '' });
    const id = r.stdout.trim();
    expect(id).toMatch(/^(gen-|resp_)/);
    // Was: streamed on to the answer's end (20,000 words through the halted filter), charged whole.
    const g = await generation(id);
    expect(g.cancelled, command).toBe(true);
    expect(g.tokens_completion as number).toBeLessThan(20_000);
    // One ledger line, with the id and no cost: usage --reconcile asks the service for it.
    const lines = ledger(state);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ command, id });
    expect(lines[0]!.cost).toBeUndefined();
  }
});

it('router models whose words or filters match nothing says so on stderr, piped too, and exits 1 (as grep)', async () => {
  // Was: nothing at all, exit 0 (piped); "no models match" on a terminal only.
  expect(await run(['models', 'zzz'])).toMatchObject({ code: 1, stdout: '', stderr: 'error: no model matches "zzz"\n' });
  expect(await run(['models', 'zzz', 'lorem', '--json'])).toMatchObject({ code: 1, stdout: '[]\n', stderr: 'error: no model matches "zzz" and "lorem"\n' });
  expect(await run(['models', 'lorem', '--supports', 'tools'])).toMatchObject({ code: 1, stdout: '', stderr: 'error: no model matches "lorem" with --supports tools\n' });
  expect(await runInProcess(['models', 'zzz'], { env: { ...t.env, NO_COLOR: '1' }, tty: { stdout: true } })).toMatchObject({ code: 1, stdout: '', stderr: 'error: no model matches "zzz"\n' });
  // A match, and the whole list, as before.
  expect(await run(['models', 'lorem'])).toMatchObject({ code: 0, stdout: 'local/lorem\tlocal/lorem\t524288\t0.50\t1.50\ttext->text\n' });
  expect((await run(['models'])).code).toBe(0);
});

it('stdin of blank lines is said as such, not "stdin was empty"; -a - or a file of blank lines is refused as empty, nothing sent', async () => {
  // Was: "stdin was empty" for any stdin of whitespace.
  expect(await run(['chat', '-m', 'local/echo'], {}, '\n\n  \n')).toMatchObject({ code: 2, stdout: '', stderr: 'error: no prompt: stdin held only blank lines (echo hi | router chat, or give the prompt as arguments)\n' });
  expect((await run(['chat', '-m', 'local/echo', '-'], {}, '   ')).stderr).toBe('error: no prompt: stdin held only spaces (echo hi | router chat, or give the prompt as arguments)\n');
  expect((await run(['chat', '-m', 'local/echo'], {}, '')).stderr).toBe('error: no prompt: stdin was empty (echo hi | router chat, or give the prompt as arguments)\n');
  expect((await run(['chat', '-m', 'local/echo', '-s', '@-', 'hi'], {}, '\n')).stderr).toBe('error: --system @-: stdin held only blank lines (pipe the text in, or give --system TEXT)\n');
  expect((await run(['api', 'POST', '/v1/chat/completions', '--input', '-'], {}, '\r\n')).stderr).toBe('error: --input -: stdin held only blank lines (pipe the body in; a POST with no body is router api POST PATH)\n');
  // Was: sent as a text file of blank lines (a model that takes none refused it, 400; one that does was asked about nothing).
  const before = t.requests().length;
  expect(await run(['chat', '-m', 'local/echo', '-a', '-', 'hi'], {}, '\n\n\n')).toMatchObject({ code: 2, stdout: '', stderr: 'error: --attach -: stdin held only blank lines\n' });
  const blank = join(t.dir, 'blank.txt');
  writeFileSync(blank, ' \n\t\n');
  expect((await run(['chat', '-m', 'local/echo', '-a', blank, 'hi'])).stderr).toBe(`error: --attach ${blank}: the file holds only blank lines\n`);
  expect(t.requests().length).toBe(before);
});

it('an API root at localhost and one at 127.0.0.1 (or [::1]) are one service: a job made at one is taken up at the other', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'loopback') };
  const file = join(t.dir, 'loopback.jsonl');
  writeFileSync(file, JSON.stringify({ custom_id: 'l', body: { messages: [{ role: 'user', content: 'l' }] } }) + '\n');
  const first = await run(['batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.05'], env);
  expect(first.code, first.stderr).toBe(0);
  const job = /job (job_\w+):/.exec(first.stderr)![1]!;
  const localhost = { ...env, ROUTER_API_ROOT: t.apiRoot.replace('127.0.0.1', 'localhost') };
  const before = t.requests().length;
  // Was: a new job, every request sent again; --resume refused ("made at http://127.0.0.1:…").
  const again = await run(['batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.05'], localhost);
  expect(again.stderr).toMatch(new RegExp(`^resuming ${job}, made from this file`));
  expect(t.requests().slice(before).filter((r) => r.method === 'POST')).toEqual([]);
  expect((await run(['batch', 'run', '--resume', job, '--watch'], localhost)).code).toBe(0);
  // Another port, another loopback address: other services.
  const { sameRoot } = await import('../../src/internal/api-root.js');
  expect(sameRoot('http://localhost:8080/api', 'http://127.0.0.1:8080/api')).toBe(true);
  expect(sameRoot('http://[::1]:8080/api/', 'HTTP://LOCALHOST:8080/api')).toBe(true);
  expect(sameRoot('http://localhost:8080/api', 'http://127.0.0.1:8081/api')).toBe(false);
  expect(sameRoot('http://localhost:8080/api', 'http://127.0.0.2:8080/api')).toBe(false);
});

it("commander's errors quote a long value cut and a control character escaped, as every error line does", async () => {
  const long = `local/${'e'.repeat(5000)}`;
  // Was: the 5,006 characters in full.
  expect(await run(['chat', '--model', long, 'hi'])).toMatchObject({ code: 2, stdout: '', stderr: `error: option '-m, --model <id>' argument 'local/${'e'.repeat(94)}…' is invalid: it is 5006 characters long: a model id has at most 256; see "router chat --help"\n` });
  // Was: ESC sent to the terminal as it is.
  expect((await run(['models', '--sort', 'a\u001b[2Jb'])).stderr).toBe(`error: option '--sort <key>' argument 'a\\u001b[2Jb' is invalid: allowed choices are price, context, name; see "router models --help"\n`);
  expect((await run(['models', '--sort', 'pric'])).stderr).toBe(`error: option '--sort <key>' argument 'pric' is invalid: allowed choices are price, context, name (did you mean price?); see "router models --help"\n`);
});

it('a library root with a user name and password: "is … the API root" and a redirect name it without them', async () => {
  const { startFixtureServer } = await import('../support/fixture-server.js');
  const { RouterClient } = await import('../../src/client/index.js');
  const server = await startFixtureServer({
    'GET /api/v1/credits': { status: 404, contentType: 'text/plain', body: 'nothing here' },
    'GET /api/v1/models': { status: 301, headers: { location: '/elsewhere' } },
    'GET /api/v1/key': { contentType: 'text/html', body: '<html></html>' },
  });
  const root = server.apiRoot.replace('http://', 'http://user:s3cret@');
  const client = new RouterClient({ apiKey: 'sk-test-key-000000', apiRoot: root, maxRetries: 0 });
  try {
    const shown = server.apiRoot.replace('http://', 'http://***@');
    // Was: http://user:s3cret@127.0.0.1:…/api in each message.
    for (const call of [() => client.credits.get(), () => client.models.list(), () => client.keys.current()]) {
      const err = (await call().catch((e: unknown) => e)) as Error & { request?: { url: string } };
      expect(err.message).toContain(`is ${shown} the API root`);
      expect(err.message).not.toContain('s3cret');
      expect(err.request?.url ?? '').not.toContain('s3cret');
    }
  } finally {
    await Promise.all([client.close(), server.close()]);
  }
});

it('completion never runs a key command on a Tab: batch ids from the local index, models from the kept list, no key hashes', async () => {
  const config = join(t.dir, 'complete-commands');
  const state = join(t.dir, 'complete-state');
  const ran = join(t.dir, 'key-command-ran');
  for (const field of ['api_key_command', 'management_key_command']) expect((await run(['config', 'set', field, `touch '${ran}'; echo ${t.env.ROUTER_API_KEY}`], { ROUTER_CONFIG_DIR: config })).code).toBe(0);
  // Made with the key from the environment: in the local index, and the model list kept.
  const requests = join(t.dir, 'complete.jsonl');
  writeFileSync(requests, JSON.stringify({ custom_id: 'c', body: { model: 'local/echo', messages: [{ role: 'user', content: 'c' }] } }) + '\n');
  const batch = JSON.parse((await run(['batch', 'create', requests, '--json'], { ROUTER_STATE_DIR: state })).stdout).id as string;
  expect((await run(['models'], { ROUTER_STATE_DIR: state })).code).toBe(0);
  const byCommand = { ROUTER_CONFIG_DIR: config, ROUTER_STATE_DIR: state, ROUTER_API_KEY: '', ROUTER_MANAGEMENT_KEY: '' };
  // Was: the api_key_command ran on each Tab (a password manager may prompt there).
  expect(await run(['__complete', 'batch-ids'], byCommand)).toMatchObject({ code: 0, stdout: `${batch}\n`, stderr: '' });
  const models = await run(['__complete', 'models'], byCommand);
  expect(models.stdout.split('\n')).toContain('local/lorem');
  expect(await run(['__complete', 'key-hashes'], byCommand)).toMatchObject({ code: 0, stdout: '', stderr: '' });
  expect(existsSync(ran)).toBe(false);
  // A command that is not completion runs the key command as before.
  expect((await run(['batch', 'get', batch, '--json'], byCommand)).code).toBe(0);
  expect(existsSync(ran)).toBe(true);
});

it('keys list and batch jobs on an 80-column terminal: each row a block of "column  value" lines, nothing cut, none wider', async () => {
  const mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  const made = JSON.parse((await run(['keys', 'create', 'eighty', '--json'], mgmt)).stdout).data as { hash: string };
  const at = async (columns: number, args: string[], env: Record<string, string> = {}) => (await runInProcess(args, { env: { ...t.env, NO_COLOR: '1', ...env }, tty: { stdout: true }, columns })).stdout;
  // Was: a table of ~220 columns, each line wrapped.
  const keys = await at(80, ['keys', 'list'], mgmt);
  expect(Math.max(...keys.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
  expect(keys).toContain(`hash     ${made.hash}\nname     eighty\n`);
  expect(keys).toMatch(/^created {2}\S+Z$/m);
  expect(keys).toMatch(/Z\n\nhash {5}[0-9a-f]{64}\n/);
  // Wide enough, the table as before.
  expect(await at(240, ['keys', 'list'], mgmt)).toMatch(/^hash +name +label +state/m);
  const env = { ROUTER_STATE_DIR: join(t.dir, 'eighty') };
  const jsonl = join(t.dir, 'eighty.jsonl');
  writeFileSync(jsonl, '{"custom_id":"a","body":{"messages":[{"role":"user","content":"hi"}]}}\n');
  expect((await run(['batch', 'run', jsonl, '--model', 'local/echo'], env)).code).toBe(0);
  const jobs = await at(80, ['batch', 'jobs'], env);
  expect(Math.max(...jobs.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
  expect(jobs).toMatch(/^id {25}job_\S+\nstate {22}\S+/);
  expect(jobs).toContain(`input                      ${jsonl}\n`);
});

it('login --with-key checked against ROUTER_API_ROOT says the profile does not keep that root, piped too', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'login-piped'), ROUTER_API_KEY: '' };
  // Was: said only when stderr is a terminal.
  const r = await run(['login', '--with-key'], env, t.apiKey);
  expect(r).toMatchObject({ code: 0, stdout: '' });
  expect(r.stderr).toContain(`the key was checked against ${t.apiRoot} (ROUTER_API_ROOT), which profile "default" does not keep: give --api-root "$ROUTER_API_ROOT" to keep it\n`);
  expect((await run(['login', '--with-key', '--api-root', t.apiRoot], env, t.apiKey)).stderr).not.toContain('does not keep');
});

it('batch run --watch on a terminal of 0 columns says its lines: no spinner, which cleared lines without end there', async () => {
  const { main } = await import('../../src/cli/main.js');
  const { testStreams } = await import('../support/inprocess.js');
  const jsonl = join(t.dir, 'zero-columns.jsonl');
  writeFileSync(jsonl, '{"custom_id":"a","body":{"messages":[{"role":"user","content":"hi"}]}}\n');
  const s = testStreams({ env: { ...t.env, NO_COLOR: '1', ROUTER_STATE_DIR: join(t.dir, 'zero-columns') }, tty: { stderr: true } });
  // `script`'s pty, or a container's before it is sized. A flood is cut short here: it was a loop without end.
  let written = 0;
  const write = s.streams.stderr.write.bind(s.streams.stderr) as (chunk: unknown, ...rest: unknown[]) => boolean;
  Object.assign(s.streams.stderr, {
    columns: 0,
    isTTY: true,
    write: (chunk: string | Buffer, ...rest: unknown[]) => {
      written += chunk.length;
      if (written > 1_000_000) throw new Error('stderr flooded');
      return write(chunk, ...rest);
    },
  });
  const code = await main(['node', 'router', 'batch', 'run', jsonl, '--model', 'local/echo', '--watch', '--interval', '0.05'], s.streams);
  expect(code, s.stderr()).toBe(0);
  // And one request is "1 request" (was: "1 requests"), one shard "1 shard" (was: "1 shard(s)").
  expect(s.stderr()).toMatch(/^job job_\w+: 1 request in 1 shard\n/);
  expect(written).toBeLessThan(10_000);
  expect(s.stderr()).not.toContain('\u001b[1A');
});
