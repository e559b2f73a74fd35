import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// Issue 46, round 13: a newcomer's hour with the installed tarball.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

it('auth migrate --dry-run in a fresh home writes no config file (it made one holding no profile)', async () => {
  const config = join(t.dir, 'fresh-config');
  for (const args of [['auth', 'migrate', '--dry-run'], ['auth', 'migrate', '--dry-run', '--json'], ['auth', 'migrate']]) {
    const r = await run(args, { ROUTER_KEYCHAIN: '', ROUTER_CONFIG_DIR: config });
    expect(r.code).toBe(0);
    expect(existsSync(config)).toBe(false);
  }
  // With a key to move, the dry run still writes nothing to the file it reads.
  expect((await run(['login', '--with-key', '--no-verify'], { ROUTER_CONFIG_DIR: config }, 'sk-rt-v1-notreal0000')).code).toBe(0);
  const file = join(config, 'config.json');
  const before = statSync(file).mtimeMs;
  const r = await run(['auth', 'migrate', '--dry-run'], { ROUTER_KEYCHAIN: '', ROUTER_CONFIG_DIR: config });
  expect(r).toMatchObject({ code: 0, stdout: '' });
  expect(r.stderr).toMatch(/^would move the api_key of profile "default" into .+\n$/);
  expect(statSync(file).mtimeMs).toBe(before);
});
