import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Session 64's small edges a user meets (task c12).
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const faults = (...specs: string[]) => t.admin('faults', { faults: specs });

it('a retry that waits over 2 s is said on stderr when piped (not with --quiet); a short one is not', async () => {
  await faults('429,retry_after=3,times=1,path=/v1/chat/completions');
  // Was: 3 s of silence off a terminal.
  const piped = await run(['chat', '--model', 'local/echo', 'later']);
  expect(piped).toMatchObject({ code: 0, stdout: 'later\n' });
  expect(piped.stderr).toMatch(/^retry 1 in 3\.0s: .+\n$/);
  await faults('429,retry_after=3,times=1,path=/v1/chat/completions');
  expect(await run(['chat', '--quiet', '--model', 'local/echo', 'later'])).toMatchObject({ code: 0, stderr: '' });
  await faults('503,times=1,path=/v1/chat/completions');
  expect(await run(['chat', '--model', 'local/echo', 'soon'])).toMatchObject({ code: 0, stderr: '' });
});

it('a Retry-After longer than --timeout names the flag', async () => {
  await faults('429,retry_after=30,times=1,path=/v1/chat/completions');
  const r = await run(['chat', '--timeout', '5', '--model', 'local/echo', 'later']);
  expect(r.code).toBe(6);
  // Was: "longer than 5s, so no retry".
  expect(r.stderr).toContain('(the service asked to wait 30s before retrying: longer than --timeout 5s, so no retry; a longer --timeout waits for it)');
});

it("the note that the environment goes before a profile names only settings the command reads", async () => {
  expect((await run(['config', 'set', 'embed_model', 'local/embed-small', '--profile', 'embedder'])).code).toBe(0);
  const env = { ROUTER_EMBED_MODEL: 'local/embed', ROUTER_MODEL: 'local/echo', ROUTER_STATE_DIR: `${t.dir}/state-embedder` };
  // Was: "… for embed_model (ROUTER_EMBED_MODEL) …" of a chat, which never embeds.
  expect(await run(['--profile', 'embedder', 'chat', 'hi'], env)).toMatchObject({ code: 0, stdout: 'hi\n', stderr: '' });
  const embedded = await run(['--profile', 'embedder', 'embed', 'hi'], env);
  expect(embedded).toMatchObject({ code: 0, stderr: 'note: the environment goes before profile "embedder" for embed_model (ROUTER_EMBED_MODEL): unset it to use the profile\'s\n' });
});

it('router api: a POST whose answer is lost says it may have been carried out (a GET does not)', async () => {
  await t.admin('faults', { faults: ['lost,times=1,method=POST,path=/v1/chat/completions'] });
  const lost = await run(['api', 'POST', '/v1/chat/completions', '-F', 'messages[][role]=user', '-f', 'messages[][content]=hi', '-f', 'model=local/echo']);
  expect(lost).toMatchObject({ code: 8, stdout: '' });
  // Was: "connection … failed: …" and no more.
  expect(lost.stderr).toMatch(/; the service may have carried out POST \/v1\/chat\/completions all the same: check before sending it again\n$/);
  await t.admin('faults', { faults: ['lost,times=1,method=GET,path=/v1/models'] });
  const get = await run(['--max-retries', '0', 'api', '/v1/models']);
  expect(get.code).not.toBe(0);
  expect(get.stderr).not.toContain('may have carried out');
});

it("decide prints a score's probabilities by the levels' names", async () => {
  const r = await run(['decide', '--state-text', 'The soup was cold', '--model', 'local/judge', '--score', 'mood', 'How positive?', '--level', 'bad', '--level', 'ok', '--level', 'good'], { ROUTER_MANAGEMENT_KEY: t.managementKey });
  expect(r.code).toBe(0);
  // Was: "0=0.67 1=0.22 2=0.11".
  expect(r.stdout).toMatch(/^mood\tscore\t[\d.]+ \((bad|ok|good)\)\t[\d.]+\tbad=[\d.]+ ok=[\d.]+ good=[\d.]+\n$/);
});

it('batch create --watch --json says on stderr how many requests failed, as --results does', async () => {
  const lines = [
    JSON.stringify({ custom_id: 'bad', body: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 99_999_999 } }),
    JSON.stringify({ custom_id: 'good', body: { messages: [{ role: 'user', content: 'hi' }] } }),
  ];
  const input = join(t.dir, 'watch-json-partly-failed.jsonl');
  writeFileSync(input, `${lines.join('\n')}\n`);
  const r = await run(['batch', 'create', input, '--model', 'local/echo', '--watch', '--interval', '0.05', '--json'], { ROUTER_STATE_DIR: join(t.dir, 'state-watch-json') });
  expect(r.code, r.stderr).toBe(0);
  const id = JSON.parse(r.stdout.trim().split('\n').at(-1)!).id;
  // Was: the progress lines only.
  expect(r.stderr).toContain(`${id}: 1 of 2 requests failed: see their "error" in the results (router batch get ${id} --results)\n`);
});

it('every group command and every config subcommand shows Examples in --help (examples.test.ts runs them)', async () => {
  const { buildProgram } = await import('../../src/cli/main.js');
  const program = await buildProgram();
  const help = (cmd: typeof program) => {
    let text = '';
    cmd.configureOutput({ writeOut: (s: string) => (text += s) });
    cmd.outputHelp();
    return text;
  };
  const subs = (cmd: typeof program) => cmd.commands.filter((c) => c.name() !== 'help');
  const groups = subs(program).filter((c) => subs(c).length > 0);
  const config = groups.find((g) => g.name() === 'config')!;
  // Was: batch, keys, collections, roles, aliases, conversations, fragments, auth; config get, list, use, delete, path.
  const named = [...groups.map((c) => [c.name(), c] as const), ...subs(config).map((c) => [`config ${c.name()}`, c] as const)];
  expect(named.filter(([, c]) => !/\nExamples:\n {2}\$ /.test(help(c))).map(([name]) => name)).toEqual([]);
});
