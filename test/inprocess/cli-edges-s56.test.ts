import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { runInProcess } from '../support/inprocess.js';

// The CLI's edges closing note 9 left ("CLI", "Keys and activity"): each said in one line with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const onTerminal = (args: string[], env: Record<string, string> = {}) => runInProcess(args, { env: { ...t.env, NO_COLOR: '1', ...env }, tty: { stdout: true } });

it('a conversation id that starts with "-": taken as --conversation\'s value, named with -- where it is an argument', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'dash-ids') };
  // commander gives an option its value even when it starts with "-": no -- needed.
  expect(await run(['chat', '-m', 'local/echo', '--conversation', '-abc', 'hi'], env)).toMatchObject({ code: 0, stdout: 'hi\n' });
  expect(await run(['chat', '-m', 'local/echo', '--conversation=-abc', 'again'], env)).toMatchObject({ code: 0, stdout: 'again\n' });
  // As an argument it reads as flags: the error names the way out (was: unknown option '-abc', and nothing more).
  expect(await run(['conversations', 'show', '-abc'], env)).toMatchObject({ code: 2, stdout: '', stderr: 'error: unknown option \'-abc\' (an id that starts with "-" goes after --, as in router conversations show -- -abc); see "router conversations show --help"\n' });
  expect((await run(['conversations', 'delete', '-x'], env)).stderr).toBe('error: unknown option \'-x\' (an id that starts with "-" goes after --, as in router conversations delete -- -x); see "router conversations delete --help"\n');
  // The guess for a near id gives it in the form that runs (was: "did you mean -abc?", which does not).
  expect(await run(['conversations', 'show', 'abc'], env)).toMatchObject({ code: 5, stderr: 'error: no conversation abc (did you mean -abc? as in router conversations show -- -abc) (router conversations list shows them)\n' });
  expect((await run(['conversations', 'show', '--', '-abc'], env)).stdout).toBe('user: hi\n\nassistant: hi\n\nuser: again\n\nassistant: again\n');
  // A mistyped flag still gets its guess; a flag of the command still works.
  expect((await run(['conversations', 'show', '--jsn', 'x'], env)).stderr).toBe('error: unknown option \'--jsn\' (Did you mean --json?); see "router conversations show --help"\n');
  expect((await run(['conversations', 'delete', '--', '-abc'], env)).code).toBe(0);
  expect((await run(['conversations', 'list'], env)).stdout).not.toMatch(/^-abc\t/m);
});
