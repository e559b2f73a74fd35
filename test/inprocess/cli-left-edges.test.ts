import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { runInProcess } from '../support/inprocess.js';

// The edges closing note 7 left for #46: each refused or said, never garbled or silent.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('a dashed sentence read as a flag with its attached value is refused whole, nothing sent', async () => {
  expect(await run(['chat', '--model', 'local/echo', "-so what's up?"])).toMatchObject({
    code: 2,
    stdout: '',
    stderr: `error: "-so what's up?" would be read as -s "o what's up?": text that starts with "-" goes after --, as in router chat -- "-so what's up?" (a flag's value with spaces goes apart: -s "o what's up?"); nothing was sent\n`,
  });
  // After flags that take none, and with a character the shell would expand inside double quotes.
  expect((await run(['chat', '--model', 'local/echo', '-qso what now $HOME'])).stderr).toMatch(/^error: '-qso what now \$HOME' would be read as -s 'o what now \$HOME': .* router chat -- '-qso what now \$HOME' /);
  expect((await run(['responses', '--model', 'local/echo', '-mlocal/echo ok'])).code).toBe(2);
  expect(t.requests()).toEqual([]);
  // Attached values without whitespace, values apart, and text after -- are as before.
  expect(await run(['chat', '-mlocal/echo', '-sterse', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(t.requests().at(-1)?.body).toMatchObject({ model: 'local/echo', messages: [{ role: 'system', content: 'terse' }, { role: 'user', content: 'hi' }] });
  expect(await run(['chat', '-m', 'local/echo', '-s', 'be terse', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(await run(['chat', '-m', 'local/echo', '--', "-so what's up?"])).toMatchObject({ code: 0, stdout: "-so what's up?\n" });
  // The prompt in another word: a value with spaces run on to its flag (-s"be terse", the shell's quotes gone) is the flag's.
  expect(await run(['chat', '-mlocal/echo', '-sbe terse', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(t.requests().at(-1)?.body).toMatchObject({ messages: [{ role: 'system', content: 'be terse' }, { role: 'user', content: 'hi' }] });
  expect((await run(['chat', '-mlocal/echo', '-qsbe terse', '--', '-hi'])).stdout).toBe('-hi\n');
  expect((await run(['chat', '-mlocal/echo', '-sbe terse'])).code).toBe(2);
  // Where the command takes no text, an attached value with a space is the flag's: a header of router api.
  expect(await run(['api', '-HX-Title: my app', '/v1/models', '--jq', '.data[0].id'])).toMatchObject({ code: 0, stdout: 'local/echo\n' });
  expect(t.requests().at(-1)?.headers['x-title']).toBe('my app');
});

it("--jq: debug and stderr are said on stderr, halt_error's text too with its exit status, error({...}) without jq's prefix", async () => {
  const jq = (filter: string) => run(['models', 'show', 'local/echo', '--jq', filter]);
  expect(await jq('debug("seen") | .id')).toMatchObject({ code: 0, stdout: 'local/echo\n', stderr: '["DEBUG:","seen"]\n' });
  expect(await jq('.id | stderr | length')).toMatchObject({ code: 0, stdout: '10\n', stderr: 'local/echo' });
  expect(await jq('"bye\\n" | halt_error(0)')).toMatchObject({ code: 0, stdout: '', stderr: 'bye\n' });
  expect(await jq('{id} | halt_error(3)')).toMatchObject({ code: 3, stdout: '', stderr: '{"id":"local/echo"}\n' });
  expect(await jq('.id, ("no\\n" | halt_error)')).toMatchObject({ code: 5, stdout: 'local/echo\n', stderr: 'no\n' });
  expect(await jq('debug("before") | error({id})')).toMatchObject({ code: 1, stdout: '', stderr: '["DEBUG:","before"]\nerror: --jq: {"id":"local/echo"}\n' });
  // A stream's chunks, run together when nothing is said, are run one by one when something is: each said once.
  const streamed = await run(['chat', '-m', 'local/echo', '--stream', '--json', '--jq', 'debug("chunk") | .object', 'hello there friend']);
  const chunks = streamed.stdout.trim().split('\n');
  expect(chunks.length).toBeGreaterThan(1);
  expect(streamed.stderr).toBe('["DEBUG:","chunk"]\n'.repeat(chunks.length));
});

it('roles edit of a new role whose template is left unchanged makes no role, exit 1; a changed one is made', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'roles-unchanged'), VISUAL: '' };
  const roles = join(env.ROUTER_CONFIG_DIR, 'roles');
  expect(await run(['roles', 'edit', 'scratch'], { ...env, EDITOR: 'true' })).toMatchObject({ code: 1, stdout: '', stderr: 'error: role scratch not created (the template was left unchanged)\n' });
  expect(existsSync(roles) ? readdirSync(roles) : []).toEqual([]);
  expect(await run(['roles', 'edit', 'scratch'], { ...env, EDITOR: 'echo You are terse. >' })).toMatchObject({ code: 0 });
  // An existing role quit unchanged is left as it is, no error (there is nothing not to make).
  expect(await run(['roles', 'edit', 'scratch'], { ...env, EDITOR: 'true' })).toMatchObject({ code: 0 });
  expect(readdirSync(roles)).toEqual(['scratch.md']);
});

it('roles list: a role with no model is an empty field piped, a dash in the table on a terminal', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'roles-no-model') };
  await run(['roles', 'save', 'plain', '--system', 'Be plain.'], env);
  await run(['roles', 'save', 'echoing', '--system', 'Echo.', '--model', 'local/echo'], env);
  expect((await run(['roles', 'list'], env)).stdout).toBe('echoing\tlocal/echo\tEcho.\nplain\t\tBe plain.\n');
  const tty = await runInProcess(['roles', 'list'], { env: { ...t.env, ...env }, tty: { stdout: true } });
  // On a terminal the one table every list draws (no tabs), the missing model a dash.
  expect(tty.stdout).not.toContain('\t');
  expect(tty.stdout).toMatch(/^plain +- +Be plain\.$/m);
});

it('a bare router, or a group with no subcommand, prints its help on stdout, exit 0, as gh does', async () => {
  for (const [args, usage] of [[[], 'router [options] [command]'], [['batch'], 'router batch [options] [command]'], [['-q', 'roles'], 'router roles [options] [command]']] as const) {
    const r = await run([...args]);
    expect(r, args.join(' ')).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout.startsWith(`Usage: ${usage}\n`), r.stdout.slice(0, 80)).toBe(true);
  }
  // A word that is no subcommand is still a usage error.
  expect(await run(['batch', 'nope'])).toMatchObject({ code: 2, stdout: '', stderr: 'error: unknown command \'nope\'; see "router batch --help"\n' });
});

it("another tool's name for a subcommand (ls, rm, show) gets ours as the guess", async () => {
  const hint = (group: string, word: string, meant: string) => `error: unknown command '${word}' (did you mean ${meant}?); see "router ${group} --help"\n`;
  expect(await run(['config', 'show'])).toMatchObject({ code: 2, stdout: '', stderr: hint('config', 'show', 'list') });
  expect((await run(['roles', 'ls'])).stderr).toBe(hint('roles', 'ls', 'list'));
  expect((await run(['conversations', 'rm', 'c_1'])).stderr).toBe(hint('conversations', 'rm', 'delete'));
  // A close typo is guessed as before; a word like none gets no guess.
  expect((await run(['config', 'lst'])).stderr).toBe(hint('config', 'lst', 'list'));
  expect((await run(['config', 'frobnicate'])).stderr).toBe('error: unknown command \'frobnicate\'; see "router config --help"\n');
  // A batch's results are a flag of get (batch results ID > out.jsonl is what a script writes first).
  expect(await run(['batch', 'results', 'batch_abc'])).toMatchObject({ code: 2, stdout: '', stderr: hint('batch', 'results', 'get ID --results FILE') });
  expect((await run(['keys', 'results'])).stderr).toBe('error: unknown command \'results\'; see "router keys --help"\n');
  expect(t.requests()).toEqual([]);
});
