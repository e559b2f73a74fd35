import { describe, expect, it } from 'vitest';
import { fixtureRuns } from '../support/fixture-server.js';
import { APIError, RouterClient } from '../../src/client/index.js';

// Issue 42: every HTTP failure names the request that failed (method and path, then the status),
// in the client's error and so in the CLI's one error line, with or without --verbose.
const fixture = fixtureRuns();

describe('an HTTP failure names its request', () => {
  const missing = { 'POST /api/v1/chat/completions': { status: 404, body: { error: { code: 404, message: 'Not Found' } } } };

  it('the one error line, with and without --verbose', async () => {
    const plain = await fixture.against(missing, ['chat', '--no-stream', '--model', 'x/y', 'hi']);
    expect(plain).toEqual({ code: 5, stdout: '', stderr: 'error: POST /api/v1/chat/completions: 404 Not Found: Not Found\n' });
    const verbose = await fixture.against(missing, ['--verbose', 'chat', '--no-stream', '--model', 'x/y', 'hi']);
    expect(verbose.stderr.split('\n')[0]).toBe('error: POST /api/v1/chat/completions: 404 Not Found: Not Found');
    expect(verbose.stderr).toMatch(/^ {2}status 404/m);
  });

  it('a query is part of the request named; a 402 and a 5xx say their reason', async () => {
    const routes = {
      'GET /api/v1/generation': { status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } },
      'GET /api/v1/models': { status: 500, body: { error: { code: 500, message: 'Internal Server Error' } } },
    };
    expect((await fixture.against(routes, ['generation', 'gen-1'])).stderr).toBe('error: GET /api/v1/generation?id=gen-1: 402 Payment Required: Insufficient credits\n');
    expect((await fixture.against(routes, ['models', '--refresh'])).stderr).toMatch(/^error: GET \/api\/v1\/models\S*: 500 Internal Server Error: Internal Server Error\n$/);
  });

  it('the library: message names the request; `said` keeps the service\'s own words, `request` the request', async () => {
    await fixture.against(missing, ['--version']);
    const client = new RouterClient({ apiKey: 'sk-test-key-000000', apiRoot: fixture.server!.apiRoot, maxRetries: 0 });
    try {
      const err = await client.chat.create({ model: 'x/y', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect(err).toMatchObject({ status: 404, request: 'POST /api/v1/chat/completions', said: 'Not Found', message: 'POST /api/v1/chat/completions: 404 Not Found: Not Found' });
    } finally {
      await client.close();
    }
  });
});
