import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { deadPort } from '../support/upstreams.js';
import { runCliInProcess } from '../support/cli-env.js';

// `router speak` had chat's --router-metadata but not its routing flags: no --models fallback and no
// --provider-only/-order/-ignore/--no-fallbacks, though the gateway (and the fake models) walk a speech
// request's `models` and honour its `provider` as chat's. Now speak takes them from the same flag tables.
// The providers: a closed port and another `router serve`, both serving test/tts.
let chain: GatewayChain;
let env: Record<string, string>;

beforeAll(async () => {
  const dead = await deadPort();
  chain = await startGatewayChain('speak-routing-flags', (root) => `
providers:
  - { name: dead, base_url: "http://127.0.0.1:${dead}/v1", speech_models: { test/tts: local/tts } }
  - { name: up, base_url: "${root}/v1", api_key_env: UP_KEY, speech_models: { test/tts: local/tts } }
`, { keys: 'managementKey' });
  const { apiKey, managementKey } = chain.gateway.store.firstKeys();
  env = { ROUTER_API_ROOT: chain.gateway.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: managementKey, ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '', ROUTER_CONFIG_DIR: join(chain.dir, 'config'), ROUTER_STATE_DIR: join(chain.dir, 'state') };
});

afterAll(() => chain?.close());

let n = 0;
async function speak(...flags: string[]) {
  const out = join(chain.dir, `out-${++n}.mp3`);
  const r = await runCliInProcess(['speak', 'Hello there.', '--voice', 'alloy', '-m', 'test/tts', '-o', out, '--router-metadata', '--max-retries', '0', ...flags], { env });
  return { ...r, attempts: /^router: attempts: (.*)$/m.exec(r.stderr)?.[1] };
}

describe('router speak routing flags', () => {
  it('--models falls back to the next model when every provider of the first failed', async () => {
    const r = await speak('--provider-ignore', 'up', '--models', 'local/tts');
    expect(r.code, r.stderr).toBe(0);
    expect(r.attempts).toBe('test/tts via dead (502), local/tts via local-alpha (200)');
  });

  it('--provider-only and --provider-order choose the provider', async () => {
    expect((await speak('--provider-only', 'up')).attempts).toBe('test/tts via up (200)');
    expect((await speak('--provider-order', 'up,dead')).attempts).toBe('test/tts via up (200)');
  });

  it('--no-fallbacks asks the first provider only', async () => {
    const r = await speak('--no-fallbacks');
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('router: attempt 1: test/tts via dead failed: dead: connection refused (ECONNREFUSED)\n');
    // `up` never asked: no attempt of it, and named as passed over with why.
    expect(r.stderr).not.toContain('attempt 2');
    expect(r.stderr).toContain('router: passed over: test/tts via up: up: not the first provider (dead), and provider.allow_fallbacks is false\n');
  });

  it('--models ids are checked before anything is sent, as chat checks them', async () => {
    const r = await speak('--models', 'not a model');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--models.*"not a model" does not look like/);
  });
});
