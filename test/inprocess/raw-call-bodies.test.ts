import { afterEach, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';
import { startBadServer, type BadServer } from '../support/bad-server.js';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server.js';

// `router api` reads the answer's body itself: a body that stalls or breaks is the same failure,
// with the same exit code, as for every other command; a listing that never ends is not followed forever.
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
    expect(r.stderr).toMatch(/^error: timed out waiting for 127\.0\.0\.1:\d+ \(--timeout 300ms\)\n$/);
    expect(r.code).toBe(8);
  });
});

describe('a listing whose cursor comes again (a page that names itself as the next)', () => {
  const batch = { id: 'batch_1', object: 'batch', endpoint: '/v1/chat/completions', model: 'x/y', status: 'completed', created_at: 1, request_counts: { total: 1, completed: 1, failed: 0 } };
  const page = { object: 'list', data: [batch], first_id: 'batch_1', last_id: 'batch_1', has_more: true };
  let fixture: FixtureServer | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it.each([
    ['router api --paginate', ['api', '/v1/batches', '--paginate'], /^error: --paginate: the listing does not end: last_id batch_1 comes again\n$/],
    ['batch list --all', ['batch', 'list', '--all', '--json'], /^error: .*batch listing does not end: last_id batch_1 comes again\n$/],
  ])('%s stops after the page comes again (exit 7), never loops', async (_, args, said) => {
    fixture = await startFixtureServer({ 'GET /api/v1/batches': { body: page } });
    const r = await runInProcess(['--max-retries', '0', ...args], { env: env(fixture.apiRoot) });
    expect(r.stderr).toMatch(said);
    expect(r.code).toBe(7);
    expect(fixture.requests.length).toBeLessThanOrEqual(3);
  });
});

describe('a redirect (an API root given as http:// of an https:// service, or a login page)', () => {
  let fixture: FixtureServer | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('is not followed: one line saying where to and asking about the API root, exit 7', async () => {
    const to = { status: 301, contentType: 'text/html', headers: { location: 'https://router.example/login' }, body: '<a href="https://router.example/login">moved</a>' };
    fixture = await startFixtureServer({ 'GET /api/v1/key': to, 'GET /api/v1/models': to });
    for (const args of [['auth', 'status'], ['models', '--refresh']]) {
      const r = await runInProcess(['--max-retries', '0', ...args], { env: { ...env(fixture.apiRoot), ROUTER_STATE_DIR: '/nonexistent-router-state' } });
      expect(r.stderr).toMatch(/^error: HTTP 301 from http:\/\/127\.0\.0\.1:\d+\/api\/v1\/(key|models)\S*: a redirect to https:\/\/router\.example\/login, not followed \(the key stays with the API root\): is http:\/\/127\.0\.0\.1:\d+\/api the API root \(the URL before \/v1\)\?\n$/);
      expect(r.code).toBe(7);
    }
    expect(fixture.requests.every((q) => q.url.startsWith('/api/'))).toBe(true);
  });
});
