import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';
import { testGateway } from '../support/upstreams.js';

// `router models` rounded prices to two decimals per million tokens: a model at $1e-13 a prompt token
// (0.0000001 per million) and $1.5e-8 a completion token (0.015) listed as "0.00" and "0.01" (or "0.02").
// Below 1 per million, a price now keeps two significant digits: one that is not 0 never reads as 0.
let gw: Awaited<ReturnType<typeof testGateway>>;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-small-prices-'));
  gw = await testGateway(
    'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { test/cheap: m, test/free: f, test/dear: d }, prices: { test/cheap: { prompt: 1e-13, completion: 1.5e-8 }, test/free: { prompt: 0, completion: 0 }, test/dear: { prompt: 0.0000025, completion: 0.00001 } } }\n',
    'small-prices',
  );
});

afterAll(async () => {
  await gw.close();
  rmSync(dir, { recursive: true, force: true });
});

it('router models shows a tiny price as itself, never 0.00; free and ordinary prices as before', async () => {
  const env = {
    ROUTER_API_ROOT: gw.gateway.apiRoot,
    ROUTER_API_KEY: gw.gateway.store.firstKeys().apiKey,
    ROUTER_CONFIG_DIR: join(dir, 'config'),
    ROUTER_STATE_DIR: join(dir, 'state'),
    ROUTER_KEYCHAIN: 'off',
    ROUTER_PROFILE: '',
  };
  const r = await runInProcess(['models', 'test/'], { env });
  expect(r.code, r.stderr).toBe(0);
  const prices = Object.fromEntries(r.stdout.trimEnd().split('\n').map((l) => l.split('\t')).map((f) => [f[0], f.slice(3, 5)]));
  expect(prices).toEqual({ 'test/cheap': ['0.0000001', '0.015'], 'test/free': ['0.00', '0.00'], 'test/dear': ['2.50', '10.00'] });
});
