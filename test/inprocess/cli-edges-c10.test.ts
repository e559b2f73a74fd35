import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { typedRepl } from '../support/typed-repl.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { runProcess } from '../support/run-process.js';
import { BIN } from '../helpers.js';

// Session 63's CLI edges (issue 46: nothing cut or refused in silence).
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('a refused loopback root is told by the error code, not its words: one on the default port gets the hint too', async () => {
  // Was: the hint only where the message matched "connection refused: HOST:PORT" (a root with no port had none).
  for (const root of ['http://localhost/api', 'http://127.0.0.1:9/api']) {
    const r = await run(['--api-root', root, '--max-retries', '0', 'chat', '-m', 'local/echo', 'hi']);
    expect(r).toMatchObject({ code: 8, stdout: '', stderr: `error: connection refused: ${new URL(root).host}, on this machine: is router serve running? (the API root from --api-root)\n` });
  }
  expect(t.requests()).toEqual([]);
});

it('--schema, --tools and -a take @FILE as -s @FILE does (curl, router api -F); @- is stdin; ./@name a file named so', async () => {
  const schema = join(t.dir, 'city.json');
  writeFileSync(schema, '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}');
  // Was: "--schema: cannot read @…/city.json (no such file or folder)" (a file literally named "@…").
  const atFile = await run(['chat', '-m', 'local/echo', '--schema', `@${schema}`, 'hi']);
  expect(atFile).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(atFile.stdout)).toEqual({ city: expect.any(String) });
  expect((await run(['chat', '-m', 'local/echo', '--schema', '@-', 'hi'], {}, readFileSync(schema, 'utf8'))).code).toBe(0);
  const tools = join(t.dir, 'tools.json');
  writeFileSync(tools, JSON.stringify([{ type: 'function', name: 'now', parameters: { type: 'object', properties: {} }, command: 'echo noon' }]));
  expect(await run(['chat', '-m', 'local/tools', '--tools', `@${tools}`, 'now'])).toMatchObject({ code: 0, stdout: expect.stringContaining('noon') });
  const note = join(t.dir, 'note.txt');
  writeFileSync(note, 'attached words');
  expect(await run(['chat', '-m', 'local/vision', '-a', `@${note}`, 'read'])).toMatchObject({ code: 0, stderr: '' });
  // A role saved with @FILE keeps the file's path, which works from any folder.
  expect((await run(['roles', 'save', 'city', '--system', 'Name a city.', '--schema', `@${schema}`])).code).toBe(0);
  expect((await run(['roles', 'show', 'city'])).stdout).toContain(`schema: ${schema}\n`);
  expect(await run(['chat', '-m', 'local/echo', '--schema', '@nope.json', 'hi'])).toMatchObject({ code: 2, stderr: 'error: --schema nope.json: cannot read it (no such file or folder)\n' });
  writeFileSync(join(t.dir, '@odd.json'), readFileSync(schema));
  expect((await run(['chat', '-m', 'local/echo', '--schema', join(t.dir, '@odd.json'), 'hi'])).code).toBe(0);
});

it('-x on an answer cut at its length limit inside its code block prints none of it and exits 1 (`| sh` would run part of it)', async () => {
  const answer = 'Here:\n```py\nprint(1)\nprint(2)\nprint(3)\n```\n';
  const error = (flag: string) => `error: ${flag}: the answer was cut at its length limit inside its code block: none of it was printed, as part of a program could run\n`;
  for (const stream of ['--stream', '--no-stream']) {
    // Was: "print(1\n" printed, exit 0.
    expect(await run(['chat', '-m', 'local/echo', stream, '--max-tokens', '9', '-x'], {}, answer)).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `note: the answer was cut at its length limit (9 tokens; --max-tokens N raises it)\n${error('--extract')}`,
    });
    expect(await run(['responses', '-m', 'local/echo', stream, '--max-output-tokens', '9', '--extract-last'], {}, answer)).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `note: the response is incomplete (cut at its length limit, 9 output tokens; --max-output-tokens N raises it)\n${error('--extract-last')}`,
    });
  }
  // A block closed before the cut is whole: printed, exit 0.
  const closed = await run(['chat', '-m', 'local/echo', '--max-tokens', '24', '-x'], {}, answer + 'and more words after it\n');
  expect(closed).toMatchObject({ code: 0, stdout: 'print(1)\nprint(2)\nprint(3)\n' });
});

it('-x takes off the \\r of CRLF lines, and takes a fence inside a blockquote, its markers off', async () => {
  // Was: "echo 1\r\n" (sh reads "1\r"), and a quoted fence skipped: the answer printed whole.
  expect(await run(['chat', '-m', 'local/echo', '-x'], {}, 'Run:\r\n```sh\r\necho 1\r\n```\r\n')).toMatchObject({ code: 0, stdout: 'echo 1\n', stderr: '' });
  expect(await run(['chat', '-m', 'local/echo', '-x'], {}, 'Quote:\n> ```py\n> print(1)\n>     x = 2\n>\n> ```\nafter\n')).toMatchObject({ code: 0, stdout: 'print(1)\n    x = 2\n\n', stderr: '' });
  // A quote nested twice, and a quote that ends ends its block (as Markdown closes a block with its container).
  expect((await run(['chat', '-m', 'local/echo', '-x'], {}, '> > ```\n> > a\n> > > b\n> > ```\n')).stdout).toBe('a\n> b\n');
  expect(await run(['chat', '-m', 'local/echo', '-x'], {}, '> ```\n> a\n\nnot code\n')).toMatchObject({ code: 0, stdout: 'a\n', stderr: '' });
  // Code lines that start with ">" in a block outside any quote keep it.
  expect((await run(['chat', '-m', 'local/echo', '-x'], {}, '```\n> a\n```\n')).stdout).toBe('> a\n');
});

/** What a call that took the rest of a while-read loop's list says (input.ts), whichever shell ran the loop. */
const note = 'note: stdin is a pipe the shell that ran this command reads too, as a while-read loop over it does: what was left of it went with the prompt, and the loop gets none of it; --no-stdin (or ROUTER_NO_STDIN=1) leaves stdin to the loop, and a "-" among the words takes it as meant, without this note (as a script handing on its own piped stdin means it: router chat "summarise" -)\n';

it.runIf(process.platform === 'linux')('a while-read loop over a pipe: the first call says it took the rest of the list, as one over a file does', async () => {
  const sh = (script: string) => runProcess('bash', ['-c', script], { cwd: t.dir, env: { ...process.env, ...t.env, ROUTER: BIN } });
  // Was: the same answer, and nothing said.
  const loop = (flags: string) => `printf 'a.txt\\nb.txt\\nc.txt\\n' | while read f; do "$ROUTER" chat ${flags} --model local/echo "about $f"; done`;
  expect(await sh(loop(''))).toMatchObject({ status: 0, stdout: 'b.txt\nc.txt\n\nabout a.txt\n', stderr: note });
  // Process substitution is a pipe too.
  expect((await sh(`while read f; do "$ROUTER" chat --model local/echo "about $f"; done < <(printf 'a\\nb\\n')`)).stderr).toBe(note);
  expect(await sh(loop('--no-stdin'))).toMatchObject({ status: 0, stdout: 'about a.txt\nabout b.txt\nabout c.txt\n', stderr: '' });
  expect((await sh(loop('--quiet'))).stderr).toBe('');
  // A pipe to this command alone is what the user meant: nothing said.
  expect(await sh(`echo notes | "$ROUTER" chat --model local/echo summarise`)).toMatchObject({ status: 0, stdout: 'notes\n\nsummarise\n', stderr: '' });
  // A script that hands its piped stdin on (its shell holds the pipe too) says so with "-".
  writeFileSync(join(t.dir, 'summarise.sh'), '"$ROUTER" chat --model local/echo summarise -\necho done\n');
  expect(await sh('echo notes | bash summarise.sh')).toMatchObject({ status: 0, stdout: 'summarise\n\nnotes\ndone\n', stderr: '' });
});

const hasFish = spawnSync('fish', ['-c', 'exit 0']).status === 0;
it.runIf(process.platform === 'linux' && hasFish)('fish: a while-read loop over a pipe is said too (fish reads the pipe on a descriptor other than 0)', async () => {
  const fish = (script: string) => runProcess('fish', ['-c', script], { cwd: t.dir, env: { ...process.env, ...t.env, ROUTER: BIN } });
  // Was: the rest of the list went with the first prompt, and nothing said (the check looked at fd 0 only).
  const loop = (flags: string) => `printf 'a.txt\\nb.txt\\n' | while read f; $ROUTER chat ${flags} --model local/echo "about $f"; end`;
  expect(await fish(loop(''))).toMatchObject({ status: 0, stdout: 'b.txt\n\nabout a.txt\n', stderr: note });
  expect(await fish(loop('--no-stdin'))).toMatchObject({ status: 0, stdout: 'about a.txt\nabout b.txt\n', stderr: '' });
  expect(await fish(`echo notes | $ROUTER chat --model local/echo summarise`)).toMatchObject({ status: 0, stdout: 'notes\n\nsummarise\n', stderr: '' });
});

it('roles save keeps a --model alias as the alias, warns of a --default the role has no place for; models options set names the model meant', async () => {
  expect((await run(['aliases', 'set', 'quick', 'local/echo'])).code).toBe(0);
  expect((await run(['roles', 'save', 'brief', '--system', 'Be brief.', '--model', 'quick'])).code).toBe(0);
  // Was "model: local/echo": pointing the alias elsewhere left the role behind.
  expect((await run(['roles', 'show', 'brief'])).stdout).toBe('---\nmodel: quick\n---\nBe brief.\n');
  expect((await run(['aliases', 'set', 'quick', 'local/lorem'])).code).toBe(0);
  expect((await run(['chat', '--role', 'brief', '--json', 'hi'])).stdout).toContain('"model":"local/lorem"');
  // An alias that is none is refused, as --model refuses it anywhere.
  expect((await run(['roles', 'save', 'brief2', '--system', 'x', '--model', 'quik'])).code).toBe(2);
  // Was: saved without a word; then (c10) saved with a warning; now refused, nothing saved (c11).
  const typo = await run(['roles', 'save', 'tr', '--system', 'Translate to $lang.', '--default', 'lnag=French']);
  expect(typo).toMatchObject({ code: 2, stderr: 'error: role tr has no $lnag: --default lnag would go unused (nothing saved; the placeholders: $lang)\n' });
  expect((await run(['roles', 'show', 'tr'])).code).not.toBe(0);
  expect((await run(['roles', 'save', 'tr', '--system', 'Translate to $lang.', '--default', 'lang=French'])).stderr).not.toMatch(/warning/);
  // Was: kept without a word for a model no list has.
  expect((await run(['models'])).code).toBe(0);
  expect(await run(['models', 'options', 'set', 'local/ecko', 'temperature', '0.5'])).toMatchObject({ code: 0, stderr: `note: local/ecko is not in the model list of ${t.apiRoot} (did you mean local/echo?); set all the same\n` });
  expect((await run(['models', 'options', 'set', 'local/echo', 'temperature', '0.5'])).stderr).toBe('');
});

it('stdin of unknown size read from its descriptor past its first MiB: every byte once, and the bound still holds', async () => {
  const { readFdBounded } = await import('../../src/cli/io/bounded-read.js');
  const sent = Buffer.alloc(3 * 1024 * 1024 + 17, 'abcdefghij');
  const source = join(t.dir, 'big.txt');
  writeFileSync(source, sent);
  // A named pipe a writer fills (blocking, as a shell's pipe is): its size is not known.
  const piped = async (max?: number) => {
    const fifo = join(t.dir, `fifo-${max ?? 'all'}`);
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', 'cat "$0" > "$1"', source, fifo], { stdio: 'ignore' });
    const fd = openSync(fifo, 'r');
    try {
      return await readFdBounded(fd, 'stdin', true, undefined, max);
    } finally {
      closeSync(fd);
      writer.kill();
    }
  };
  const read = await piped();
  expect(read?.more).toBe(false);
  expect(read?.bytes.equals(sent)).toBe(true);
  await expect(piped(2 * 1024 * 1024)).rejects.toThrow('stdin holds more than 2.097152 MB');
});

/** `router chat -i ARGS`, stdout piped: each line typed once the prompt before it shows, then /exit (exit 0). */
async function replSession(env: Record<string, string | undefined>, args: string[], lines: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await typedRepl({ ...t.env, ...env, NO_COLOR: '1' }, lines, { args, stdoutPiped: true });
  expect(r.code).toBe(0);
  return r;
}

it('chat -i: /role NAME key=value fills a placeholder the role lacks a value for, and a role\'s prompt text takes each message', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'repl-roles'), ROUTER_STATE_DIR: join(t.dir, 'repl-roles-state') };
  expect((await run(['roles', 'save', 'tr', '--system', 'Be exact.', '--prompt', 'Translate to $lang: $input', '--model', 'local/echo'], env)).code).toBe(0);
  const r = await replSession(env, ['--model', 'local/echo'], ['/role tr', '/role tr lang="Low German"', 'good morning']);
  // Was: "give --param lang VALUE" (a flag of the command, so a restart), and the message sent as typed.
  expect(r.stderr).toMatch(/^error: \/role: role tr: no value for \$lang \(give it: \/role tr lang=VALUE; \$\$ writes a literal \$\)$/m);
  expect(r.stderr).toMatch(/^role tr \(model local\/echo\)$/m);
  expect(r.stdout).toBe('Translate to Low German: good morning\n');
  // Taken with --role and --param at the start, the same.
  const started = await replSession(env, ['--role', 'tr', '--param', 'lang', 'French'], ['good night']);
  expect(started.stdout).toBe('Translate to French: good night\n');
});
