import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// The CLI's small edges closing note 10 left ("CLI"): each said in one line, with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('chat -c -abc: -c takes no id; when conversation -abc is kept, the refusal names --conversation -abc', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'continue-id') };
  expect((await run(['chat', '-m', 'local/echo', '--conversation', '-abc', 'hi'], env)).code).toBe(0);
  // Was: -abc read as -a bc, "error: --attach: cannot read bc (no such file or folder)".
  expect(await run(['chat', '-m', 'local/echo', '-c', '-abc', 'again'], env)).toMatchObject({ code: 2, stdout: '', stderr: 'error: -c continues the last conversation and takes no id: -abc reads as flags; to go on with conversation -abc, give --conversation -abc\n' });
  expect((await run(['chat', '-m', 'local/echo', '--continue', '-abc', 'again'], env)).code).toBe(2);
  // A flag after -c is still a flag; -c goes on with the last conversation.
  expect(await run(['chat', '-c', '-mlocal/echo', 'again'], env)).toMatchObject({ code: 0, stdout: 'again\n' });
  expect((await run(['conversations', 'show', '--', '-abc'], env)).stdout).toBe('user: hi\n\nassistant: hi\n\nuser: again\n\nassistant: again\n');
});
