import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';
import { startedForAll } from '../support/for-all.js';

// The management API's keys as the OpenAPI has them (createKeys, list, getKey, updateKeys,
// deleteKeys): settings stored and returned, and a key's limit, expiry and disabling enforced.
const t = startedForAll(() => startCliEnv());

const call = async (method: string, path: string, key: string, body?: unknown) => {
  const res = await fetch(`${t.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const chat = (key: string) => call('POST', '/v1/chat/completions', key, { model: 'local/echo', messages: [{ role: 'user', content: 'hello there' }] });
const create = async (body: Record<string, unknown>) => {
  const r = await call('POST', '/v1/keys', t.managementKey, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect(violations(answerValidator('post', '/keys', '201'), r.body)).toBe('');
  return r.body as { key: string; data: Record<string, any> };
};

describe('a key limit', () => {
  it('is stored, returned, counted and enforced with 403 as the service does', async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const made = await create({ name: 'capped', limit: 1, limit_reset: 'daily', include_byok_in_limit: true, expires_at: expires });
    expect(made.data).toMatchObject({ name: 'capped', limit: 1, limit_remaining: 1, limit_reset: 'daily', include_byok_in_limit: true, expires_at: expires, usage: 0, disabled: false, updated_at: null });
    expect(made.data.hash).toMatch(/^[0-9a-f]{64}$/);

    expect((await chat(made.key)).status).toBe(200);
    const after = (await call('GET', '/v1/key', made.key)).body.data;
    expect(violations(answerValidator('get', '/key', '200'), { data: after })).toBe('');
    expect(after.usage).toBeGreaterThan(0);
    expect(after).toMatchObject({ limit: 1, limit_reset: 'daily', usage_daily: after.usage, usage_monthly: after.usage });
    expect(after.limit_remaining).toBeCloseTo(1 - after.usage, 10);

    // The limit lowered to what was spent: the next paid request is refused, and nothing is charged.
    const patched = await call('PATCH', `/v1/keys/${made.data.hash}`, t.managementKey, { limit: after.usage });
    expect(patched.status).toBe(200);
    expect(violations(answerValidator('patch', '/keys/{hash}', '200'), patched.body)).toBe('');
    expect(patched.body.data).toMatchObject({ limit: after.usage, limit_remaining: 0 });
    const refused = await chat(made.key);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('Key limit exceeded (daily limit). Manage it using https://openrouter.ai/settings/keys');
    expect((await call('GET', '/v1/key', made.key)).body.data.usage).toBe(after.usage);

    expect((await call('PATCH', `/v1/keys/${made.data.hash}`, t.managementKey, { limit: null })).body.data.limit_remaining).toBeNull();
    expect((await chat(made.key)).status).toBe(200);
  });

  it('of 0 refuses the first paid request; keys without one are not limited', async () => {
    expect((await chat((await create({ name: 'zero', limit: 0 })).key)).status).toBe(403);
    const free = await create({ name: 'free' });
    expect(free.data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null, expires_at: null });
    expect((await chat(free.key)).status).toBe(200);
  });
});

describe('the keys routes', () => {
  it('list, get, disable and delete keys; a disabled or deleted key is refused', async () => {
    const made = await create({ name: 'listed' });
    const path = `/v1/keys/${made.data.hash}`;
    const listed = await call('GET', '/v1/keys', t.managementKey);
    expect(listed.status).toBe(200);
    expect(violations(answerValidator('get', '/keys', '200'), listed.body)).toBe('');
    expect(listed.body.data.map((k: { name: string }) => k.name)).toContain('listed');
    const got = await call('GET', path, t.managementKey);
    expect(violations(answerValidator('get', '/keys/{hash}', '200'), got.body)).toBe('');
    expect(got.body.data).toMatchObject({ hash: made.data.hash, name: 'listed' });

    const off = await call('PATCH', path, t.managementKey, { disabled: true, name: 'renamed' });
    expect(off.body.data).toMatchObject({ disabled: true, name: 'renamed' });
    expect(typeof off.body.data.updated_at).toBe('string');
    expect((await chat(made.key)).status).toBe(401);
    const names = async (q: string) => (await call('GET', `/v1/keys${q}`, t.managementKey)).body.data.map((k: { hash: string }) => k.hash);
    expect(await names('')).not.toContain(made.data.hash);
    expect(await names('?include_disabled=true')).toContain(made.data.hash);
    expect(await names('?include_disabled=true&offset=1000')).toEqual([]);

    const gone = await call('DELETE', path, t.managementKey);
    expect(gone).toEqual({ status: 200, body: { deleted: true } });
    expect(violations(answerValidator('delete', '/keys/{hash}', '200'), gone.body)).toBe('');
    expect((await call('GET', path, t.managementKey)).status).toBe(404);
    expect((await call('GET', '/v1/key', made.key)).status).toBe(401);
  });

  it('refuse bad settings with 400, and standard keys with 403', async () => {
    for (const body of [{ name: 'x', limit: -1 }, { name: 'x', limit: '5' }, { name: 'x', limit_reset: 'yearly' }, { name: 'x', expires_at: '2099-01-01T00:00:00+02:00' }, { name: 'x', expires_at: '2001-01-01T00:00:00Z' }, { name: 'x', include_byok_in_limit: 'yes' }, { name: '' }]) {
      const r = await call('POST', '/v1/keys', t.managementKey, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(violations(answerValidator('post', '/keys', '400'), r.body)).toBe('');
    }
    expect((await call('GET', '/v1/keys?offset=-1', t.managementKey)).status).toBe(400);
    expect((await call('GET', '/v1/keys', t.apiKey)).status).toBe(403);
    expect((await call('GET', `/v1/keys/${'0'.repeat(64)}`, t.managementKey)).status).toBe(404);
  });

  it('an expired key is refused with 401', async () => {
    const made = await create({ name: 'brief', expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await chat(made.key)).status).toBe(200);
    await t.admin('clock', { advance_seconds: 7200 });
    const r = await chat(made.key);
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('API key has expired');
  });
});
