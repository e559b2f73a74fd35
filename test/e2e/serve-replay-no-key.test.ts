// `router serve --replay` sends nothing upstream: a provider's api_key_env unset (a CI run without secrets) is no warning there.
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { killedServe, spawnServe } from '../support/serve-process.js';

it('serve --replay with api_key_env unset starts without "its requests go without a key"', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-replay-key-'));
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, 'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", api_key_env: ROUTER_TEST_UNSET_KEY, models: { t/m: m } }\n');
  mkdirSync(join(dir, 'cassettes'));
  const g = await spawnServe(['--state', join(dir, 'state'), '--providers', providers, '--replay', join(dir, 'cassettes')], { HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), ROUTER_TEST_UNSET_KEY: '' });
  let stderr = '';
  g.child.stderr!.on('data', (c) => (stderr += c));
  await killedServe(g);
  // Was: "warning: provider up: ROUTER_TEST_UNSET_KEY is not set; its requests go without a key".
  expect(stderr).not.toContain('without a key');
  expect(stderr).not.toContain('ROUTER_TEST_UNSET_KEY');
});
