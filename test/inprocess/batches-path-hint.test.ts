import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// batches_path set for the deployed service (/beta/batches, as real-service-batches.md says), then `router serve`
// of api.md's shape: a create was a bare "404 Not Found: No route for POST /beta/batches", with no word of the
// setting that sent it there.
let t: CliEnv;
let requests: string;
beforeAll(async () => {
  t = await startCliEnv();
  requests = join(t.dir, 'requests.jsonl');
  writeFileSync(requests, `${JSON.stringify({ custom_id: 'a', body: { messages: [{ role: 'user', content: 'hi' }] } })}\n`);
});
afterAll(() => t?.close());

it('a create refused 404 where ROUTER_BATCHES_PATH sends it names the variable and how to drop it', async () => {
  const r = await t.run(['batch', 'create', requests, '--model', 'local/echo'], { env: { ROUTER_BATCHES_PATH: '/beta/batches' } });
  expect(r.stdout).toBe('');
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('(batches are sent to /beta/batches as ROUTER_BATCHES_PATH says; this API root has none there: unset ROUTER_BATCHES_PATH, and router finds where it keeps them)');
});

it("a profile's batches_path: batch run says the command that unsets it; unset, the same create goes through", async () => {
  expect((await t.run(['config', 'set', 'batches_path', '/beta/batches'])).code).toBe(0);
  const run = await t.run(['batch', 'run', requests, '--model', 'local/echo']);
  expect(run.code).not.toBe(0);
  expect(run.stderr).toContain('as batches_path of profile "default" says; this API root has none there: router config unset batches_path, and router finds');
  expect((await t.run(['config', 'unset', 'batches_path'])).code).toBe(0);
  const made = await t.run(['batch', 'create', requests, '--model', 'local/echo']);
  expect(made).toMatchObject({ code: 0, stdout: expect.stringMatching(/^batch_\w+\n$/) });
});

it('a get of an unknown batch at a set place keeps its own words (a 404 there is no batch, not no place)', async () => {
  const r = await t.run(['batch', 'get', 'batch_nope'], { env: { ROUTER_BATCHES_PATH: '/v1/batches' } });
  expect(r.code).not.toBe(0);
  expect(r.stderr).not.toContain('batches are sent to');
});
