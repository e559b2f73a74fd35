import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { until } from '../support/until.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { startRouterShim, type RouterShim } from '../support/router-shim.js';

// Issue 46, round 6: what a sixth newcomer pass, from the installed tarball, found.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

// A `router` on PATH that runs main() in this process, for examples run as a shell runs them.
let shim: RouterShim;
let bin: string;
beforeAll(async () => {
  bin = join(t.dir, 'shim-bin');
  mkdirSync(bin);
  mkdirSync(join(t.dir, 'shim-spool'));
  shim = await startRouterShim(bin, join(t.dir, 'shim-spool'));
});
afterAll(() => shim?.close());

/** Runs `script` in bash in `cwd` (made empty) with `home` as an empty HOME; returns its exit code and stderr. */
async function inShell(script: string, cwd: string, home: string): Promise<{ code: number | null; stderr: string }> {
  for (const d of [cwd, home]) mkdirSync(d, { recursive: true });
  const env = { ...t.env, PATH: `${bin}:${process.env.PATH}`, HOME: home, XDG_DATA_HOME: '', XDG_STATE_HOME: join(home, 'state'), XDG_CONFIG_HOME: '', ROUTER_CONFIG_DIR: join(home, 'config') };
  const child = spawn('bash', ['-e', '-c', script], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  return { code, stderr };
}

/** The lines of a page's sh blocks, continuation lines joined (as the README's examples test reads them). */
const shLines = (md: string) => [...md.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.replace(/\\\n\s*/g, '').split('\n')).filter(Boolean);

const line = (id: string, text: string, extra: Record<string, unknown> = {}) => JSON.stringify({ custom_id: id, body: { ...extra, messages: [{ role: 'user', content: text }] } });

it('batch results with answers cut at their length limit say so on stderr, piped too', async () => {
  const input = join(t.dir, 'cut.jsonl');
  writeFileSync(input, [line('a', 'write 50 words', { max_tokens: 3 }), line('b', 'second'), line('c', 'write 40 words', { max_tokens: 2 })].join('\n'));
  const note = (id: string) => `note: ${id}: 2 of 3 answers were cut at the length limit (finish_reason "length" in the results; a larger max_tokens in their lines lets them finish)\n`;
  const out = join(t.dir, 'cut-out.jsonl');
  const created = await run(['batch', 'create', input, '--model', 'local/lorem', '--watch', '--interval', '0.05', '--results', out]);
  expect(created.code).toBe(0);
  const id = /created (batch_\w+)/.exec(created.stderr)![1]!;
  expect(created.stderr).toContain(note(id));
  expect(readFileSync(out, 'utf8').match(/"finish_reason":"length"/g)).toHaveLength(2);
  // batch get --results, to stdout: the results are stdout's, the note stderr's.
  const got = await run(['batch', 'get', id, '--results']);
  expect(got.stdout.trim().split('\n')).toHaveLength(3);
  expect(got.stderr).toBe(note(id));
  // batch run merges them: said once, with the job.
  const ran = await run(['batch', 'run', input, '--model', 'local/lorem', '--watch', '--interval', '0.05', '--results', join(t.dir, 'cut-run.jsonl')]);
  expect(ran.code).toBe(0);
  const job = /(job_\w+)/.exec(ran.stderr)![1]!;
  expect(ran.stderr).toContain(note(job));
  // A Responses batch says it in its own words.
  const responses = join(t.dir, 'cut-responses.jsonl');
  writeFileSync(responses, JSON.stringify({ custom_id: 'r', method: 'POST', url: '/v1/responses', body: { max_output_tokens: 16, input: 'write 50 words' } }));
  const resp = await run(['batch', 'create', responses, '--model', 'local/lorem', '--endpoint', '/v1/responses', '--watch', '--interval', '0.05', '--results', join(t.dir, 'cut-responses-out.jsonl')]);
  const rid = /created (batch_\w+)/.exec(resp.stderr)![1]!;
  expect(resp.stderr).toContain(`note: ${rid}: 1 of 1 answer was cut at the length limit (status "incomplete" in the results; a larger max_output_tokens in its line lets it finish)\n`);
  // None cut: nothing said.
  const whole = join(t.dir, 'whole.jsonl');
  writeFileSync(whole, [line('a', 'first'), line('b', 'second')].join('\n'));
  const quiet = await run(['batch', 'create', whole, '--model', 'local/echo', '--watch', '--interval', '0.05', '--results', join(t.dir, 'whole-out.jsonl')]);
  expect(quiet.stderr).not.toMatch(/length limit/);
});

it('/model with a bare slug in chat -i gets the guess --model gives, and the model stays', async () => {
  const s = testStreams({ env: { ...t.env, ROUTER_STATE_DIR: join(t.dir, 'repl-model-state'), NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
  const keys = new PassThrough();
  s.streams.stdin = keys;
  const session = main(['node', 'router', 'chat', '-i', '--model', 'local/lorem'], s.streams);
  const prompts = () => (s.stderr().match(/> /g) ?? []).length;
  for (const [i, text] of ['/model echo', '/model', '/model gpt4', '/exit'].entries()) {
    expect(await until(() => prompts() > i)).toBe(true);
    keys.write(`${text}\n`);
  }
  expect(await session).toBe(0);
  expect(s.stderr()).toContain('error: /model: echo must look like <author>/<slug>: did you mean local/echo?; the model stays\n');
  expect(s.stderr()).toContain('usage: /model <author>/<slug>\n');
  expect(s.stderr()).toContain('error: /model: gpt4 must look like <author>/<slug> (an author, a slash, a model: local/echo; the list: router models); the model stays\n');
  expect(t.requests().filter((r) => r.method === 'POST')).toEqual([]);
});

it("the README's batch example runs as printed in an empty folder: it makes its requests file", async () => {
  const block = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('router batch run'))!;
  const work = join(t.dir, 'readme-batch');
  const r = await inShell(block, work, join(t.dir, 'readme-batch-home'));
  expect(r).toMatchObject({ code: 0 });
  expect(readFileSync(join(work, 'waters-out.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
});

it('the completion examples (docs and --help) run in a fresh home, where the folders are not there yet', async () => {
  const lines = shLines(readFileSync(join(ROOT, 'docs', 'scripting.md'), 'utf8'));
  // A line naming a variable the block set before it ("$dir") runs after that assignment, as in the shell.
  const set = (l: string) => lines.filter((a) => /^(\w+)=/.test(a) && l.includes(`$${a.split('=')[0]}`)).map((a) => `${a}; `).join('');
  const docs = lines.filter((l) => l.includes('router completion')).map((l) => set(l) + l);
  // An example continued by ` \` lines is one command (as a shell reads it).
  const help = [...(await run(['completion', '--help'])).stdout.replace(/\\\n\s*/g, '').matchAll(/^\s+\$ (.+)$/gm)].map((m) => m[1]!);
  expect([docs.length, help.length]).toEqual([3, 3]);
  for (const [i, example] of [...docs, ...help].entries()) {
    const home = join(t.dir, `completion-home-${i}`);
    expect(await inShell(example, join(t.dir, `completion-work-${i}`), home)).toMatchObject({ code: 0, stderr: '' });
    // The script is where the shell looks for it.
    const written = readdirSync(home, { recursive: true, encoding: 'utf8' }).filter((f) => /(^|\/)(router|_router|router\.fish)$/.test(f));
    expect(written).toHaveLength(1);
    expect(readFileSync(join(home, written[0]!), 'utf8')).toMatch(/router/);
  }
});

it('router chat with no prompt on a terminal names chat -i as well', async () => {
  const s = testStreams({ env: { ...t.env, NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
  expect(await main(['node', 'router', 'chat', '--model', 'local/echo'], s.streams)).toBe(2);
  expect(s.stderr()).toBe('error: no prompt: give it as arguments or on stdin (echo hi | router chat); to talk, router chat -i\n');
  // responses has no session to name.
  const r = testStreams({ env: { ...t.env, NO_COLOR: '1' }, tty: { stdin: true, stdout: true, stderr: true } });
  expect(await main(['node', 'router', 'responses', '--model', 'local/echo'], r.streams)).toBe(2);
  expect(r.stderr()).toBe('error: no prompt: give it as arguments or on stdin (echo hi | router responses)\n');
  expect(t.requests()).toEqual([]);
});

it('--help shows that --json takes FIELDS, as every command with --json does', async () => {
  for (const cmd of [['chat'], ['models'], ['batch', 'list'], ['credits'], ['usage'], ['conversations', 'list']]) {
    const help = (await run([...cmd, '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help, cmd.join(' ')).toContain('--json=FIELDS (comma-separated) keeps only those fields');
  }
  expect(JSON.parse((await run(['chat', '--model', 'local/echo', '--json=model', 'hi'])).stdout)).toEqual({ model: 'local/echo' });
});

it('batch list and batch get --help name the columns they print piped', async () => {
  const input = join(t.dir, 'columns.jsonl');
  writeFileSync(input, line('a', 'first'));
  const id = (await run(['batch', 'create', input, '--model', 'local/echo'])).stdout.trim();
  const columns = 'id, status, endpoint, model, completed/failed/total, created (ISO 8601)';
  for (const [cmd, printed] of [[['batch', 'list'], ['batch', 'list', '--limit', '1']], [['batch', 'get'], ['batch', 'get', id]]] as const) {
    expect((await run([...cmd, '--help'])).stdout.replace(/\s+/g, ' ')).toContain(`tab-separated line${cmd[1] === 'list' ? ' per batch' : ''}: ${columns}`);
    const row = (await run([...printed])).stdout.trim().split('\t');
    expect(row).toHaveLength(columns.split(', ').length);
    expect(row.slice(0, 4)).toEqual([id, expect.any(String), '/v1/chat/completions', 'local/echo']);
  }
});

it('router serve --jq prints its line once it listens, not when it stops', async () => {
  // serve runs until SIGTERM: the test's own signal, with the worker's listeners set aside meanwhile.
  const others = process.listeners('SIGTERM');
  process.removeAllListeners('SIGTERM');
  try {
    const s = testStreams({ env: t.env });
    const served = main(['node', 'router', 'serve', '--port', '0', '--state', join(t.dir, 'serve-jq'), '--jq', '.api_root'], s.streams);
    expect(await until(() => s.stdout().includes('\n'))).toBe(true);
    expect(s.stdout()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\n$/);
    // It answers there (a request without a key: 401).
    expect(await fetch(`${s.stdout().trim()}/v1/models`).then((r) => r.status)).toBe(401);
    process.emit('SIGTERM');
    expect(await served).toBe(0);
    // Printed once, and pid is among the fields --json names.
    expect(s.stdout().split('\n')).toHaveLength(2);
    const f = testStreams({ env: t.env });
    const fields = main(['node', 'router', 'serve', '--port', '0', '--state', join(t.dir, 'serve-jq'), '--json=api_root,pid'], f.streams);
    expect(await until(() => f.stdout().includes('\n'))).toBe(true);
    process.emit('SIGTERM');
    expect(await fields).toBe(0);
    expect(Object.keys(JSON.parse(f.stdout()))).toEqual(['api_root', 'pid']);
  } finally {
    // A serve still running (a failed check) is stopped too.
    if (process.listenerCount('SIGTERM')) process.emit('SIGTERM');
    for (const l of others) process.on('SIGTERM', l);
  }
});

it('a binary file piped as a prompt is refused naming -a - (chat, responses)', async () => {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DAwMDAAMMAAB7YAfxCnGlYAAAAAElFTkSuQmCC', 'base64');
  for (const cmd of ['chat', 'responses']) {
    const s = testStreams({ env: t.env });
    s.streams.stdin = Readable.from([png]);
    expect(await main(['node', 'router', cmd, '--model', 'local/vision', 'what?'], s.streams)).toBe(2);
    expect(s.stderr()).toBe(`error: stdin is not UTF-8 text (it holds a NUL byte at offset 8: binary data, not text); it is image/png: attach it with -a - (cat photo.png | router ${cmd} -a - "what is this?")\n`);
  }
  expect(t.requests()).toEqual([]);
  // As said, it goes.
  const s = testStreams({ env: t.env });
  s.streams.stdin = Readable.from([png]);
  expect(await main(['node', 'router', 'chat', '--model', 'local/vision', '-a', '-', 'what is this?'], s.streams)).toBe(0);
  expect(s.stdout()).toContain('image: image/png, 75 bytes');
  // Bytes of no type an attachment takes, and embed (nothing to attach to): the error is as before.
  const odd = testStreams({ env: t.env });
  odd.streams.stdin = Readable.from([Buffer.from('a\0b\n')]);
  expect(await main(['node', 'router', 'chat', '--model', 'local/echo', 'describe'], odd.streams)).toBe(2);
  expect(odd.stderr()).toBe('error: stdin is not UTF-8 text (it holds a NUL byte at offset 1: binary data, not text)\n');
  const e = testStreams({ env: t.env });
  e.streams.stdin = Readable.from([png]);
  expect(await main(['node', 'router', 'embed', '--model', 'local/embed'], e.streams)).toBe(2);
  expect(e.stderr()).toBe('error: stdin is not UTF-8 text (it holds a NUL byte at offset 8: binary data, not text)\n');
});

it('chat --stream --json --jq runs jq on every chunk of a long answer, past the ~300 runs one jq held', async () => {
  const r = await run(['chat', '--model', 'local/lorem', '--stream', '--json', '--jq', '.choices[0].delta.content // empty', 'write 400 words']);
  expect(r).toMatchObject({ code: 0, stderr: '' });
  const words = r.stdout.split(/\s+/).filter(Boolean);
  expect(words.length).toBeGreaterThanOrEqual(400);
  const whole = await run(['chat', '--model', 'local/lorem', 'write 400 words']);
  expect(r.stdout.replace(/\n/g, '')).toBe(whole.stdout.replace(/\n/g, ''));
});

it('config set with an empty value (an unset "$VAR") says how to remove a setting', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'empty-setting') };
  expect(await run(['config', 'set', 'api_root', ''], env)).toMatchObject({ code: 2, stdout: '', stderr: 'error: api_root must not be empty (an unset variable?); router config unset api_root removes it\n' });
  expect(await run(['config', 'unset', 'api_root'], env)).toMatchObject({ code: 0 });
});

it('config set of a key with nothing piped names config set, not login (which keeps the API key only)', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'empty-key') };
  expect(await run(['config', 'set', 'management_key'], env, '')).toMatchObject({ code: 2, stdout: '', stderr: 'error: no management key given (pipe it on stdin, e.g. printf %s "$KEY" | router config set management_key; an unset KEY pipes nothing)\n' });
  expect((await run(['config', 'set', 'api_key'], env, '\n')).stderr).toBe('error: no api key given (pipe it on stdin, e.g. printf %s "$KEY" | router config set api_key; an unset KEY pipes nothing)\n');
  // login's own words are as before.
  expect((await run(['login', '--with-key'], env, '')).stderr).toBe('error: no api key given (pipe it on stdin, e.g. router login --with-key < key.txt)\n');
});
