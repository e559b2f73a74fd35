import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Issue 46, small edges: what a newcomer types from other tools gets the way here.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('--model echo: did you mean local/echo (an emulator model by its slug); another bare name says the shape', async () => {
  const echo = await run(['chat', '--model', 'echo', 'hi']);
  expect(echo).toMatchObject({ code: 2, stderr: 'error: option \'-m, --model <id>\' argument \'echo\' is invalid: must look like <author>/<slug>: did you mean local/echo?; see "router chat --help"\n' });
  const bare = await run(['chat', '--model', 'gpt-4o', 'hi']);
  expect(bare.stderr).toMatch(/must look like <author>\/<slug> \(an author, a slash, a model: local\/echo; the list: router models\)/);
  const env = await run(['chat', 'hi'], { ROUTER_MODEL: 'lorem' });
  expect(env.code).toBe(2);
  expect(env.stderr).toMatch(/did you mean local\/lorem\?/);
});

it('--image: did you mean -a/--attach (llm\'s and mods\' name for it)', async () => {
  const r = await run(['chat', '--image', 'photo.png', 'hi']);
  expect(r).toMatchObject({ code: 2, stderr: 'error: unknown option \'--image\' (did you mean -a/--attach?); see "router chat --help"\n' });
  // Where there is no --attach, no such guess.
  expect((await run(['embed', '--image', 'x', 'hi'])).stderr).toBe('error: unknown option \'--image\'; see "router embed --help"\n');
});

it('a --json field given as its beginning gets a guess', async () => {
  const r = await run(['batch', 'list', '--json', 'id,stat']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^error: unknown JSON field "stat" \(did you mean status\?\); fields of "batch list": /);
  const two = await run(['batch', 'list', '--json', 'fi']);
  expect(two.stderr).toMatch(/^error: unknown JSON field "fi" \(did you mean finalized_at\?\)/);
  const many = await run(['batch', 'list', '--json', 're']);
  expect(many.stderr).toMatch(/^error: unknown JSON field "re" \(did you mean one of request_counts, results\?\)/);
});

it('every listing that prints tab-separated lines piped names its columns in --help', async () => {
  await run(['chat', '--model', 'local/echo', 'a turn for the ledger and the conversations']);
  await run(['login', '--with-key', '--no-verify'], {}, t.apiKey);
  const listings: [string[], Record<string, string>?][] = [
    [['credits'], { ROUTER_MANAGEMENT_KEY: t.managementKey }],
    [['usage']],
    [['config', 'list']],
    [['conversations', 'list']],
    [['models']],
    [['decide', '--state-text', 'cold food', '--model', 'local/judge', '--noul', 'bad', 'Is it bad?'], { ROUTER_MANAGEMENT_KEY: t.managementKey }],
  ];
  for (const [args, env] of listings) {
    const r = await run(args, { ROUTER_NO_LOG: '', ...env });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    expect(r.stdout, args.join(' ')).toContain('\t');
    const help = await run([...args.slice(0, ['config', 'conversations'].includes(args[0]!) ? 2 : 1), '--help']);
    expect(help.stdout, args.join(' ')).toMatch(/[Pp]iped, one tab-separated line[^:]*: \S/);
  }
});
