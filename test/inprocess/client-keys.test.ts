import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { APIError, RouterClient, ValidationError, type ApiKey } from '../../src/client/index.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';

// The library's keys resource (client.keys) over real HTTP against the emulator: every operation of
// the OpenAPI's `API Keys`, and `GET /key` for any key.
let t: CliEnv;
let admin: RouterClient;
let standard: RouterClient;
beforeAll(async () => {
  t = await startCliEnv();
  admin = new RouterClient({ apiKey: t.managementKey, apiRoot: t.apiRoot, maxRetries: 0 });
  standard = new RouterClient({ apiKey: t.apiKey, apiRoot: t.apiRoot, maxRetries: 0 });
});
afterAll(async () => {
  await admin?.close();
  await standard?.close();
  await t.close();
});

it('create, list, get, update, delete: each as the OpenAPI has it', async () => {
  const made = await admin.keys.create({ name: 'lib', limit: 3, limit_reset: 'monthly', expires_at: '2099-01-01T00:00:00Z' });
  expect(violations(answerValidator('post', '/keys', '201'), made)).toBe('');
  expect(made.key).toMatch(/^sk-rt-v1-/);
  expect(made.data).toMatchObject({ name: 'lib', limit: 3, limit_remaining: 3, limit_reset: 'monthly', disabled: false });
  const { hash } = made.data;

  const listed = await admin.keys.list();
  expect(violations(answerValidator('get', '/keys', '200'), { data: listed })).toBe('');
  expect(listed.map((k: ApiKey) => k.hash)).toContain(hash);
  expect(JSON.stringify(listed)).not.toContain(made.key);
  expect(await admin.keys.list({ offset: listed.length })).toEqual([]);

  expect(await admin.keys.get(hash)).toMatchObject({ hash, name: 'lib' });
  const off = await admin.keys.update(hash, { disabled: true, limit: null, name: 'lib2' });
  expect(off).toMatchObject({ hash, name: 'lib2', disabled: true, limit: null });
  expect((await admin.keys.list()).map((k) => k.hash)).not.toContain(hash);
  expect((await admin.keys.list({ includeDisabled: true })).map((k) => k.hash)).toContain(hash);
  // The disabled key is refused, on its own route too.
  const own = new RouterClient({ apiKey: made.key, apiRoot: t.apiRoot, maxRetries: 0 });
  await expect(own.keys.current()).rejects.toMatchObject({ status: 401 });
  await admin.keys.update(hash, { disabled: false });
  expect(await own.keys.current()).toMatchObject({ label: `${made.key.slice(0, 12)}...${made.key.slice(-4)}`, is_management_key: false });
  await own.close();

  await admin.keys.delete(hash);
  await expect(admin.keys.get(hash)).rejects.toMatchObject({ status: 404 });
});

it('a standard key is refused with a 403 APIError; current() is any key\'s own', async () => {
  const err = await standard.keys.list().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(APIError);
  expect(err).toMatchObject({ status: 403, message: expect.stringContaining('Only management keys can perform this operation') });
  expect(await standard.keys.current()).toMatchObject({ is_management_key: false });
  expect(await admin.keys.current()).toMatchObject({ is_management_key: true });
});

it('a hash is escaped into the path; an empty one is refused before sending', async () => {
  const before = t.requests().length;
  await expect(admin.keys.get('')).rejects.toBeInstanceOf(ValidationError);
  await expect(admin.keys.delete('..')).rejects.toBeInstanceOf(ValidationError);
  expect(t.requests().length).toBe(before);
  await expect(admin.keys.get('a/b?c')).rejects.toMatchObject({ status: 404 });
  expect(t.requests().at(-1)!.path).toBe('/v1/keys/a%2Fb%3Fc');
});
