import { expect, it } from 'vitest';
import { startTestEnv } from '../helpers.js';
import { startedForAll } from '../support/for-all.js';

// The built binary hides every key it knows in what it kept (docs/keys.md); the in-process cases are in
// test/inprocess/known-keys-hidden.test.ts.
const OTHER = 'sk-rt-other-profile-0123456789abcdef';
const t = startedForAll(() => startTestEnv());

it('router logs from the built binary prints neither the environment\'s key nor another profile\'s', async () => {
  expect((await t.run(['config', 'set', 'api_key', '--profile', 'other'], { input: OTHER })).code).toBe(0);
  // runCli fails a run that prints the environment's key: the old build's chat did not, its logs did.
  expect((await t.run(['chat', '--model', 'local/echo', `mine ${t.apiKey} theirs ${OTHER}`])).code).toBe(0);
  const logs = await t.run(['logs', '-n', '1']);
  expect(logs.code).toBe(0);
  expect(logs.stdout).toContain('## Response\n\nmine **** theirs ****\n');
  expect(logs.stdout + logs.stderr).not.toContain(OTHER);
});
