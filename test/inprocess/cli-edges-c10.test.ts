import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Session 63's CLI edges (issue 46: nothing cut or refused in silence).
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('a refused loopback root is told by the error code, not its words: one on the default port gets the hint too', async () => {
  // Was: the hint only where the message matched "connection refused: HOST:PORT" (a root with no port had none).
  for (const root of ['http://localhost/api', 'http://127.0.0.1:9/api']) {
    const r = await run(['--api-root', root, '--max-retries', '0', 'chat', '-m', 'local/echo', 'hi']);
    expect(r).toMatchObject({ code: 8, stdout: '', stderr: `error: connection refused: ${new URL(root).host}, on this machine: is router serve running?\n` });
  }
  expect(t.requests()).toEqual([]);
});
