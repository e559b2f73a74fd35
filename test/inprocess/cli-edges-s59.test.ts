import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// The CLI's small edges closing note 12 left (task c5): each said in one line, with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('-cq: short flags run together work wherever each is valid, the program\'s (-q) or the command\'s (-c, -m)', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'clusters') };
  expect((await run(['chat', '-m', 'local/echo', '--conversation', 'clus', 'hi'], env)).code).toBe(0);
  // Was: "error: unknown option '-q'; see "router chat --help"" (commander reads a cluster only as far as the command knows).
  expect(await run(['chat', '-cq', '-m', 'local/echo', 'one'], env)).toMatchObject({ code: 0, stdout: 'one\n', stderr: '' });
  expect(await run(['chat', '-cqm', 'local/echo', 'two'], env)).toMatchObject({ code: 0, stdout: 'two\n', stderr: '' });
  expect(await run(['chat', '-cqmlocal/echo', 'three'], env)).toMatchObject({ code: 0, stdout: 'three\n', stderr: '' });
  expect(await run(['chat', '-m', 'local/echo', '-qc', 'four'], env)).toMatchObject({ code: 0, stdout: 'four\n', stderr: '' });
  expect((await run(['conversations', 'show', 'clus'], env)).stdout.match(/^user: /gm)?.length).toBe(5);
  // The value of a flag is never split: -s -cq is a system message "-cq".
  const sys = await run(['chat', '-m', 'local/echo', '--json', '-s', '-cq', 'five'], env);
  expect(sys.code, sys.stderr).toBe(0);
  // A letter no command on the way knows is still refused, by the word as given.
  expect(await run(['chat', '-cz', 'six'], env)).toMatchObject({ code: 2, stderr: "error: unknown option '-z'; see \"router chat --help\"\n" });
});
