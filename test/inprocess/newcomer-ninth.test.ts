import { expect, it } from 'vitest';
import { cliEnvPerFile } from '../support/cli-env.js';
import type { CliEnv } from '../support/cli-env.js';

// Issue 46, round 9: a developer piping router in scripts, from the tarball.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('router api builds a[][k] objects in command-line order across -f and -F, as gh does', async () => {
  // All -f were taken before all -F: two messages came out as [{content}, {content, role}, {role}] (a 400).
  t.clearRequests();
  const r = await run(['api', 'POST', '/v1/chat/completions', '-F', 'messages[][role]=user', '-f', 'messages[][content]=hi',
    '-F', 'messages[][role]=assistant', '-f', 'messages[][content]=hello', '-F', 'messages[][role]=user', '-f', 'messages[][content]=bye',
    '-f', 'model=local/echo', '--jq', '.choices[0].message.content']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(t.requests().at(-1)!.body.messages).toEqual([
    { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'bye' },
  ]);
  expect(r.stdout).toBe('bye\n');
});
