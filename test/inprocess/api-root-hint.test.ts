import { expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

// An API root without its /api is said as the setting to change and the value to put there, wherever it was set.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));
const origin = () => new URL(t.env.ROUTER_API_ROOT!).origin;

it('a root from ROUTER_API_ROOT or --api-root without /api: the 404 names the setting and the root with /api', async () => {
  const fixed = `${origin()}/api`;
  // Was: "…; the API root is /api" and no more (a fact, not where to change it).
  for (const root of [`${origin()}/v1`, origin()]) {
    const r = await run(['chat', '--model', 'local/echo', 'hi'], { ROUTER_API_ROOT: root });
    expect(r).toMatchObject({ code: 5, stdout: '' });
    expect(r.stderr).toMatch(/^error: POST \/v1\/chat\/completions: 404 .*\n$/);
    expect(r.stderr).toContain(` (the API root from ROUTER_API_ROOT lacks /api: set ROUTER_API_ROOT=${fixed})\n`);
  }
  const flag = await run(['--api-root', `${origin()}/v1`, 'models']);
  expect(flag.stderr).toContain(` (the API root from --api-root lacks /api: give --api-root ${fixed})\n`);
  // A root with a path of its own is not guessed at.
  expect((await run(['chat', '--model', 'local/echo', 'hi'], { ROUTER_API_ROOT: `${origin()}/x` })).stderr).not.toContain('lacks /api');
});

it("a profile's api_root without /api: the way to set it", async () => {
  const env = { ROUTER_API_ROOT: '', ROUTER_CONFIG_DIR: `${t.dir}/config-root-hint` };
  expect((await run(['config', 'set', 'api_root', `${origin()}/v1`, '--profile', 'work'], env)).code).toBe(0);
  const r = await run(['chat', '--profile', 'work', '--model', 'local/echo', 'hi'], env);
  expect(r.stderr).toContain(` (the API root from api_root of profile "work" lacks /api: router config set api_root ${origin()}/api --profile work)\n`);
});
