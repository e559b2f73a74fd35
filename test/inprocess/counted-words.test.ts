import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// A count of one is said in the singular wherever the CLI prints one (src/internal/counted.ts).
const t = startedForAll(() => startCliEnv());

it.each([
  [['embed', 'a', '--model', 'local/embed', '--usage'], /^usage: 1 input token, cost \$/m],
  [['chat', '--model', 'local/lorem', '--max-tokens', '1', 'write 20 words', '--dry-run'], /, completion ≤ 1 token, at the prices/],
  [['chat', '--model', 'local/lorem', '--max-tokens', '1', 'write 20 words'], /cut at its length limit \(1 token; --max-tokens N raises it\)/],
  [['responses', '--model', 'local/lorem', '--max-output-tokens', '1', 'write 20 words'], /cut at its length limit, 1 output token; --max-output-tokens N raises it\)/],
])('%j', async (args, said) => {
  const r = await t.run(args);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(said);
});

it('speak --usage: one character', async () => {
  const r = await t.run(['speak', 'a', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'one.mp3'), '--usage'], { env: { ROUTER_MANAGEMENT_KEY: t.managementKey } });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/^usage: \d+ bytes of audio for 1 character, cost \$/m);
});
