import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { typedRepl } from '../support/typed-repl.js';
import { testStreams } from '../support/inprocess.js';
import { main } from '../../src/cli/main.js';

// Session 64's edges of llm's features (task c11): roles, embed-multi, chat -i with fragments.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('roles save refuses a --default no placeholder takes (nothing saved); roles edit saves one and warns', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-role-defaults') };
  // Was: saved, with a warning.
  const refused = await run(['roles', 'save', 'greet', '--system', 'Hello', '--default', 'nope=1'], env);
  expect(refused).toMatchObject({ code: 2, stderr: 'error: role greet has no $nope: --default nope would go unused (nothing saved; the placeholders: none)\n' });
  expect((await run(['roles', 'list'], env)).stdout).not.toContain('greet');
  const edited = join(t.dir, 'edited-role.md');
  writeFileSync(edited, '---\ndefaults:\n  lang: French\n  nope: 1\n---\nTranslate to $lang.\n');
  // Was: saved without a word.
  const r = await run(['roles', 'edit', 'tr'], { ...env, VISUAL: '', EDITOR: `cp ${edited}` });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('warning: role tr has no $nope: its defaults nope are left unused\n');
  expect((await run(['roles', 'show', 'tr'], env)).stdout).toContain('Translate to $lang.');
  writeFileSync(join(t.dir, 'clean-role.md'), '---\ndefaults:\n  lang: French\n---\nTranslate to $lang.\n');
  expect((await run(['roles', 'edit', 'tr2'], { ...env, VISUAL: '', EDITOR: `cp ${join(t.dir, 'clean-role.md')}` })).stderr).not.toMatch(/warning/);
});

it('chat -i takes -f and --sf (the first message, the system message) and /fragment for the next message', async () => {
  const state = join(t.dir, 'state-repl-fragments');
  const env = { ...t.env, ROUTER_STATE_DIR: state, NO_COLOR: '1' };
  const [notes, sys, more] = ['notes.txt', 'sys.txt', 'more.txt'].map((n) => join(t.dir, n));
  writeFileSync(notes!, 'The door code is 4711.');
  writeFileSync(sys!, 'Answer in one line.');
  writeFileSync(more!, 'The gate code is 1147.');
  t.clearRequests();
  // Was: "--fragment, --system-fragment apply to one call, not to chat -i", exit 2.
  const r = await typedRepl(env, ['hi', `/fragment ${more}`, 'and the gate?', 'thanks'], { args: ['--model', 'local/echo', '-f', notes!, '--sf', sys!], stdoutPiped: true });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`fragment ${more} (22 characters); it goes before the next message\n`);
  const sent = t.requests().filter((q) => q.path === '/v1/chat/completions').map((q) => q.body.messages);
  expect(sent[0]).toEqual([{ role: 'system', content: 'Answer in one line.' }, { role: 'user', content: 'The door code is 4711.\nhi' }]);
  expect(sent[1]!.at(-1)).toEqual({ role: 'user', content: 'The gate code is 1147.\nand the gate?' });
  expect(sent[2]!.at(-1)).toEqual({ role: 'user', content: 'thanks' });
  expect(readdirSync(join(state, 'fragments')).filter((f) => f.endsWith('.json'))).toHaveLength(3);
  // The conversation names them by hash: -c sends their text again.
  t.clearRequests();
  expect((await run(['chat', '-c', 'and now?'], { ROUTER_STATE_DIR: state })).code).toBe(0);
  const again = t.requests().find((q) => q.path === '/v1/chat/completions')!.body.messages;
  expect(again.slice(0, 2)).toEqual(sent[0]);
  // Stdin is the terminal: "-" is refused in one line.
  const dash = testStreams({ env, tty: { stdin: true, stdout: true, stderr: true } });
  expect(await main(['node', 'router', 'chat', '-i', '--model', 'local/echo', '-f', '-'], dash.streams)).toBe(2);
  expect(dash.stderr()).toBe('error: -f -: stdin is the terminal chat -i reads; give a file, a URL or a kept fragment\n');
});

it('embed-multi shows its progress on a terminal (its count piped too); -v names where progress and detail are', async () => {
  const env = { ...t.env, ROUTER_STATE_DIR: join(t.dir, 'state-embed-progress'), NO_COLOR: '1' };
  const items = join(t.dir, 'many.jsonl');
  writeFileSync(items, Array.from({ length: 250 }, (_, i) => JSON.stringify({ id: `i${i}`, content: `item number ${i}` })).join('\n'));
  const onTerminal = testStreams({ env, tty: { stdin: false, stdout: false, stderr: true } });
  Object.assign(onTerminal.streams.stderr, { columns: 100 });
  // Was: nothing until the end, however many requests.
  expect(await main(['node', 'router', 'embed-multi', 'many', items, '--model', 'local/embed', '--batch-size', '100'], onTerminal.streams)).toBe(0);
  expect(onTerminal.stderr()).toContain('embedding into many: 0 of 250 items answered');
  expect(onTerminal.stderr()).toContain('250 items embedded into many');
  const piped = await run(['embed-multi', 'many2', items, '--model', 'local/embed', '--batch-size', '100'], { ROUTER_STATE_DIR: join(t.dir, 'state-embed-progress') });
  // The count is a fact, said piped too (once, one line); the progress is not.
  expect(piped).toMatchObject({ code: 0, stderr: '250 items embedded into many2\n' });
  // Was: "unknown option '-v'" and no more.
  expect((await run(['embed-multi', '-v', 'many', items])).stderr).toBe(`error: unknown option '-v' (its progress shows on stderr on a terminal, with no flag; --verbose adds detail to errors); see "router embed-multi --help"\n`);
});

it("similar with nothing to print says so; llm's embed NAME ID -c TEXT and similar -c are pointed to router's words", async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'state-similar-none') };
  expect((await run(['embed', '-c', 'phrases', '--id', 'hound', 'my happy hound', '--model', 'local/embed'], env)).code).toBe(0);
  // Was: nothing at all, exit 0.
  expect(await run(['similar', 'phrases', '--id', 'hound'], env)).toMatchObject({ code: 0, stdout: '', stderr: 'note: phrases has no entry to compare with besides hound (itself is left out)\n' });
  expect((await run(['similar', 'phrases', 'dog', '--prefix', 'cat/'], env)).stderr).toBe('note: no entry of phrases has an id starting with cat/\n');
  // Was: "--collection needs --id ID: the entry's id in the collection".
  expect((await run(['embed', 'phrases', 'hound', '-c', 'my happy hound'], env)).stderr).toBe(`error: --collection needs --id ID: the entry's id in the collection; llm's "embed COLLECTION ID -c TEXT" is router embed -c COLLECTION --id ID "TEXT" here\n`);
  expect((await run(['similar', 'phrases', '-c', 'dog'], env)).stderr).toBe(`error: unknown option '-c' (llm's -c TEXT is the text itself here: router similar NAME "TEXT", or --id ID for a kept entry); see "router similar --help"\n`);
});

it('chat -i: Ctrl-C while /fragment fetches a URL that stalls stops the fetch alone; the session goes on', async () => {
  const { createServer } = await import('node:http');
  const { PassThrough } = await import('node:stream');
  const { until } = await import('../support/until.js');
  let asked = 0;
  const stalls = createServer(() => void asked++); // never answers
  await new Promise<void>((resolve) => stalls.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(stalls.address() as { port: number }).port}/notes.txt`;
  try {
    const s = testStreams({ env: { ...t.env, ROUTER_STATE_DIR: join(t.dir, 'state-repl-fragment-stop'), NO_COLOR: '1' }, tty: { stdin: true, stdout: false, stderr: true } });
    const keys = new PassThrough();
    s.streams.stdin = keys;
    t.clearRequests();
    const run = main(['node', 'router', 'chat', '-i', '--model', 'local/echo', '--timeout', '600'], s.streams);
    const prompts = () => (s.stderr().match(/> /g) ?? []).length;
    expect(await until(() => prompts() >= 1)).toBe(true);
    keys.write(`/fragment ${url}\r`);
    expect(await until(() => asked > 0)).toBe(true);
    // Was: the key went unread (a real terminal's Ctrl-C ended the whole session, 130) and the fetch waited out --timeout.
    keys.write('\x03');
    expect(await until(() => s.stderr().includes('nothing added'))).toBe(true);
    expect(s.stderr()).toContain(`/fragment ${url}: stopped (Ctrl-C); nothing added\n`);
    expect(await until(() => prompts() >= 2)).toBe(true);
    keys.write('hi\r');
    expect(await until(() => prompts() >= 3)).toBe(true);
    keys.write('/exit\r');
    expect(await run).toBe(0);
    const sent = t.requests().filter((q) => q.path === '/v1/chat/completions').map((q) => q.body.messages);
    expect(sent).toEqual([[{ role: 'user', content: 'hi' }]]);
  } finally {
    stalls.closeAllConnections();
    stalls.close();
  }
});
