import { expect, it } from 'vitest';
import { cliEnvPerFile } from '../support/cli-env.js';

// Issue 46, small edges: what a newcomer types from other tools gets the way here.
const run = cliEnvPerFile(() => {});

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
  expect(r).toMatchObject({ code: 2, stderr: 'error: unknown option \'--image\' (Did you mean -a/--attach?); see "router chat --help"\n' });
  // Where there is no --attach, no such guess.
  expect((await run(['embed', '--image', 'x', 'hi'])).stderr).toBe('error: unknown option \'--image\'; see "router embed --help"\n');
});

it('a --json field given as its beginning gets a guess', async () => {
  const r = await run(['batch', 'list', '--json', 'id,stat']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^error: unknown JSON field "stat" \(Did you mean status\?\); fields of "batch list": /);
  const two = await run(['batch', 'list', '--json', 'fi']);
  expect(two.stderr).toMatch(/^error: unknown JSON field "fi" \(Did you mean finalized_at\?\)/);
  const many = await run(['batch', 'list', '--json', 're']);
  expect(many.stderr).toMatch(/^error: unknown JSON field "re" \(Did you mean one of request_counts, results\?\)/);
});
