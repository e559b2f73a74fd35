import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { RouterClient } from '../../src/client/index.js';
import { runInProcess } from '../support/inprocess.js';
import { startFixtureServer, type Fixture, type FixtureServer } from '../support/fixture-server.js';
import { answerValidator, exampleAnswer, schemaValidator, violations } from '../conformance/openapi-fixtures.js';
import { listedModel } from '../../src/emulator/resources/model-list.js';

// The account routes the real service has: the key check of login and auth status (GET /v1/key,
// with api.md's batch listing where it is absent), and the paged model list.
let emu: Emulator;
let dir: string;
let apiKey: string;
let server: FixtureServer | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-account-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  apiKey = emu.store.firstKeys().apiKey;
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

let profiles = 0;
const base = (root: string, key?: string) => ({ ROUTER_API_ROOT: root, ROUTER_API_KEY: key, ROUTER_CONFIG_DIR: join(dir, `config-${++profiles}`), ROUTER_PROFILE: '', ROUTER_NO_LOG: '1' });
const login = (root: string, key: string) => runInProcess(['--verbose', 'login', '--with-key'], { env: base(root), input: key });
const status = (root: string, key: string, json = false) => runInProcess(['auth', 'status', ...(json ? ['--json'] : [])], { env: base(root, key) });

async function fixtures(routes: Record<string, Fixture>) {
  server = await startFixtureServer(routes);
  return server.apiRoot;
}

const KEY_ANSWER = { 'GET /api/v1/key': { body: exampleAnswer('get', '/key') } };
const UNAUTHORIZED = { status: 401, body: exampleAnswer('get', '/key', '401') };

describe('router login checks the key with GET /v1/key', () => {
  it('a service with only the routes of the OpenAPI (no batch listing): saved, with its label and limits', async () => {
    const root = await fixtures(KEY_ANSWER);
    const r = await login(root, 'sk-or-v1-abc');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('key sk-or-v1-au7...890: limit $100.00 (resets monthly), $74.50 left, $25.50 used');
    expect(server!.requests.map((q) => `${q.method} ${q.url}`)).toEqual(['GET /api/v1/key']);
  });

  it('where GET /v1/key is absent (404), the batch listing api.md offers', async () => {
    const root = await fixtures({ 'GET /api/v1/batches': { body: { object: 'list', data: [], first_id: null, last_id: null, has_more: false } } });
    const r = await login(root, 'sk-or-v1-abc');
    expect(r.code).toBe(0);
    expect(server!.requests.map((q) => q.url)).toEqual(['/api/v1/key', '/api/v1/batches?limit=1']);
  });

  it('a wrong key is exit 3 either way, and nothing is saved', async () => {
    for (const routes of [{ 'GET /api/v1/key': UNAUTHORIZED }, { 'GET /api/v1/batches': UNAUTHORIZED }] as Record<string, typeof UNAUTHORIZED>[]) {
      const root = await fixtures(routes);
      const r = await login(root, 'sk-wrong');
      expect(r).toMatchObject({ code: 3, stdout: '' });
      expect(r.stderr).toContain(`${root} refused the key (401): nothing saved`);
      await server!.close();
      server = undefined;
    }
  });

  it('against the emulator: its GET /v1/key, which the OpenAPI schema accepts', async () => {
    const r = await login(emu.apiRoot, apiKey);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/key sk-rt-v1-\w+\.\.\.\w{4}: no spending limit, \$[\d.]+ used/);
    const answer = await (await fetch(`${emu.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${apiKey}` } })).json();
    expect(violations(answerValidator('get', '/key'), answer)).toBe('');
  });
});

describe('router auth status', () => {
  it("prints the key's label, limit and usage", async () => {
    const r = await status(await fixtures(KEY_ANSWER), 'sk-or-v1-abc');
    expect(r.code).toBe(0);
    // Was "limit     limit $100.00 …": the row's label said twice.
    expect(r.stdout).toContain('label\tsk-or-v1-au7...890\nlimit\t$100.00 (resets monthly), $74.50 left\nusage\t$25.50\n');
    expect(r.stdout).toContain('checked\taccepted by GET /v1/key\n');
  });

  it('--json: the details as the service sent them', async () => {
    const r = await status(await fixtures(KEY_ANSWER), 'sk-or-v1-abc', true);
    expect(JSON.parse(r.stdout)).toMatchObject({ checked_with: 'GET /v1/key', details: { label: 'sk-or-v1-au7...890', limit: 100 } });
  });

  it('--json FIELDS and --jq, as every command with --json takes them', async () => {
    const root = await fixtures(KEY_ANSWER);
    const fields = await runInProcess(['auth', 'status', '--json', 'checked_with,details'], { env: base(root, 'sk-or-v1-abc') });
    expect(fields.code).toBe(0);
    expect(Object.keys(JSON.parse(fields.stdout))).toEqual(['checked_with', 'details']);
    const jq = await runInProcess(['auth', 'status', '--jq', '.details.label'], { env: base(root, 'sk-or-v1-abc') });
    expect(jq).toEqual({ code: 0, stdout: 'sk-or-v1-au7...890\n', stderr: '' });
    const unknown = await runInProcess(['auth', 'status', '--json=label'], { env: base(root, 'sk-or-v1-abc') });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/checked_with/);
  });

  it('says where the key and the API root came from, a refused key too', async () => {
    const root = await fixtures(KEY_ANSWER);
    const r = await status(root, 'sk-or-v1-abc');
    expect(r.stdout).toContain(`api root\t${root} (ROUTER_API_ROOT)\nkey\t**** from ROUTER_API_KEY\nkept in\tthe environment (ROUTER_API_KEY)\nchecked\taccepted by GET /v1/key\n`);
    expect(JSON.parse((await status(root, 'sk-or-v1-abc', true)).stdout)).toMatchObject({ api_root_from: 'ROUTER_API_ROOT', key_from: 'ROUTER_API_KEY' });
    const refused = await status(emu.apiRoot, 'sk-rt-v1-wrong');
    // What the settings say is printed before the check: it shows when the check fails.
    expect(refused).toMatchObject({ code: 3, stdout: `profile\tdefault\napi root\t${emu.apiRoot} (ROUTER_API_ROOT)\nkey\tsk-rt-…rong from ROUTER_API_KEY\nkept in\tthe environment (ROUTER_API_KEY)\n`, stderr: `error: ${emu.apiRoot} refused the key (401): check the API key in ROUTER_API_KEY\n` });
    const env = { ...base(root), ROUTER_API_ROOT: undefined };
    expect((await runInProcess(['login', '--with-key', '--api-root', root], { env, input: 'sk-or-v1-abc' })).code).toBe(0);
    const saved = await runInProcess(['auth', 'status'], { env });
    expect(saved.stdout).toContain(`api root\t${root} (api_root of profile "default")\nkey\t**** from api_key of profile "default"\nkept in\tthe config file ${join(env.ROUTER_CONFIG_DIR, 'config.json')} (0600; "router auth migrate" moves it to the keychain)\nchecked\taccepted by GET /v1/key\n`);
  });

  it('a refused key is exit 3; a service without GET /v1/key says it has no details', async () => {
    expect(await status(emu.apiRoot, 'sk-rt-v1-wrong')).toMatchObject({ code: 3, stdout: expect.stringMatching(/^profile\tdefault\n/) });
    const r = await status(await fixtures({ 'GET /api/v1/batches': { body: { object: 'list', data: [], first_id: null, last_id: null, has_more: false } } }), 'k');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('checked\taccepted by GET /v1/batches\n');
  });
});

describe('the model list is paged', () => {
  const page = async (query = '') => (await fetch(`${emu.apiRoot}/v1/models${query}`, { headers: { authorization: `Bearer ${apiKey}` } })).json();
  const operator = (body: unknown) => fetch(`${emu.apiRoot}/_emulator/models`, { method: 'POST', headers: { authorization: `Bearer ${emu.store.operatorKey()}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('every page fits the OpenAPI ModelsListResponse; links.next is a path from the host', async () => {
    const validate = answerValidator('get', '/models');
    const first = await page('?limit=2&output_modalities=all');
    expect(violations(validate, first)).toBe('');
    expect(first.links.next).toBe('/api/v1/models?limit=2&output_modalities=all&offset=2');
    const last = await page(`?offset=${first.total_count - 1}&limit=2&output_modalities=all`);
    expect(violations(validate, last)).toBe('');
    expect(last.links.next).toBeNull();
    // Text models unless asked, as the service's default.
    expect((await page()).data.every((m: { architecture: { output_modalities: string[] } }) => m.architecture.output_modalities.includes('text'))).toBe(true);
    expect((await fetch(`${emu.apiRoot}/v1/models?limit=0`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(400);
  });

  it('the client follows links.next to the last page', async () => {
    const client = new RouterClient({ apiKey, apiRoot: emu.apiRoot, maxRetries: 0 });
    try {
      const whole = (await page('?output_modalities=all')).data.map((m: { id: string }) => m.id);
      expect((await operator({ page_size: 2 })).status).toBe(200);
      const before = emu.requestLog.length;
      expect((await client.models.list()).map((m) => m.id)).toEqual(whole);
      expect(emu.requestLog.slice(before).filter((q) => q.path === '/v1/models')).toHaveLength(Math.ceil(whole.length / 2));
    } finally {
      await operator({ page_size: 500 });
      await client.close();
    }
  });

  it('a next page on another host is not followed (the key stays home)', async () => {
    const root = await fixtures({ 'GET /api/v1/models': { body: { ...exampleAnswer('get', '/models'), total_count: 2, links: { next: 'https://elsewhere.example/api/v1/models?offset=1' } } } });
    const client = new RouterClient({ apiKey: 'k', apiRoot: root, maxRetries: 0 });
    await expect(client.models.list()).rejects.toThrow(/next page on another host \(https:\/\/elsewhere.example\): not followed/);
    await client.close();
  });
});

it("a catalog entry's listing overrides what is derived, and the result still fits the Model schema", () => {
  const vision = listedModel({ id: 'local/see', kind: 'chat', providers: ['local-alpha'], promptPrice: 1e-6, completionPrice: 1e-6, listing: { architecture: { modality: 'text+image->text', input_modalities: ['text', 'image'], output_modalities: ['text'] } } });
  expect(vision.architecture).toMatchObject({ input_modalities: ['text', 'image'] });
  expect(violations(schemaValidator('Model'), vision)).toBe('');
});
