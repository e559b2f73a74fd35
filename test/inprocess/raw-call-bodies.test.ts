import { afterEach, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';
import { startBadServer, type BadServer } from '../support/bad-server.js';

// `router api` reads the answer's body itself: a body that stalls or breaks is the same failure,
// with the same exit code, as for every other command.
let server: BadServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const env = (apiRoot: string) => ({ ROUTER_API_ROOT: apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_NO_LOG: '1' });

describe('router api: an answer whose body stops arriving', () => {
  it('is a timeout after --timeout (exit 8), named as one, not an internal error', async () => {
    server = await startBadServer('headers-then-stall');
    const r = await runInProcess(['--timeout', '300ms', '--max-retries', '0', 'api', '/v1/models'], { env: env(server.apiRoot) });
    expect(r.stderr).toMatch(/^error: timed out waiting for 127\.0\.0\.1:\d+\n$/);
    expect(r.code).toBe(8);
  });
});
