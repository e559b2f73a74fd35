import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// A shell scripter's pass from the tarball (task n7): each edge one line with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('a key given with its header word ("Bearer sk-…", as curl -H has it) is named as such, nothing sent (exit 2)', async () => {
  const r = await run(['chat', '--model', 'local/echo', 'hi'], { ROUTER_API_KEY: `Bearer ${t.apiKey}` });
  expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: ROUTER_API_KEY starts with "Bearer ": give the key alone (router sends it as "Authorization: Bearer KEY" itself)\n' });
  expect(t.requests()).toEqual([]);
});
