import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// --jq as jq runs a filter: what a value gives before an error is printed, then the error fails the
// command; what jq only says on stderr with a status of 0 (debug) is no error, said as jq says it.
let t: CliEnv;
cliEnvPerFile((env) => (t = env));

const run = async (jq: string) => {
  const s = testStreams({ env: { ...t.env, ROUTER_NO_LOG: '1' } });
  const code = await main(['node', 'router', 'chat', '--model', 'local/echo', '--json', '--jq', jq, 'hi'], s.streams);
  return { code, stdout: s.stdout(), stderr: s.stderr() };
};

it('an error after output: the output, then the error, exit 1 (before: the output alone, exit 0)', async () => {
  expect(await run('.model, error("x")')).toEqual({ code: 1, stdout: 'local/echo\n', stderr: 'error: --jq: x\n' });
  expect(await run('.model, ("stop\\n" | halt_error)')).toEqual({ code: 5, stdout: 'local/echo\n', stderr: 'stop\n' });
});

it('debug with no output is no error (before: exit 1, the debug message as the error), its message on stderr', async () => {
  expect(await run('.model | debug | empty')).toEqual({ code: 0, stdout: '', stderr: '["DEBUG:","local/echo"]\n' });
});

it('an error with no output, and a filter that works, as before', async () => {
  expect(await run('error("only")')).toEqual({ code: 1, stdout: '', stderr: 'error: --jq: only\n' });
  expect(await run('.choices[0].message.content')).toEqual({ code: 0, stdout: 'hi\n', stderr: '' });
});
