import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// A key router knows, written by hand into a setting that is no key (a profile's mcp line), is printed as **** by
// config get and config list as by every other command (docs/keys.md): the patterns of secret parts do not find `--key K`.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('config get and config list show a known key in an mcp line as ****', async () => {
  const env = { ROUTER_CONFIG_DIR: join(t.dir, 'config-known-key'), ROUTER_MANAGEMENT_KEY: t.managementKey };
  for (const key of [t.apiKey, t.managementKey]) {
    expect((await run(['config', 'set', 'mcp', `my-server --key ${key}`], env)).code).toBe(0);
    // Before: the key in full, on stdout, in both.
    expect(await run(['config', 'get', 'mcp'], env)).toMatchObject({ code: 0, stdout: 'my-server --key ****\n' });
    expect(JSON.parse((await run(['config', 'get', 'mcp', '--json'], env)).stdout)).toMatchObject({ value: 'my-server --key ****' });
    const list = await run(['config', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).profiles[0].mcp).toBe('my-server --key ****');
  }
});
