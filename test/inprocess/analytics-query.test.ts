import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';

// `POST /v1/analytics/query` (the OpenAPI's queryAnalytics) sums what the emulator keeps of the
// workspace's generations: by model, provider, key or workspace, by time bucket, filtered, ordered
// and cut as asked. Was: not served (404 "No route").
let t: CliEnv;
const costs = new Map<string, number[]>();

const chat = async (key: string, model: string, content: string) => {
  const res = await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content }] }) });
  const answer = (await res.json()) as { usage: { cost: number } };
  return answer.usage.cost;
};

beforeAll(async () => {
  t = await startCliEnv();
  for (const [model, content] of [['local/echo', 'one'], ['local/echo', 'two words'], ['local/lorem', 'write 5 words']]) {
    costs.set(model, [...(costs.get(model) ?? []), await chat(t.apiKey, model, content)]);
  }
  // Another workspace's call: never in this one's answers.
  await chat(t.emu.store.createWorkspace('other', 1).apiKey, 'local/echo', 'elsewhere');
});
afterAll(() => t?.close());

const query = async (body: unknown, key = t.managementKey) => {
  const res = await fetch(`${t.apiRoot}/v1/analytics/query`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as any;
  expect(violations(answerValidator('post', '/analytics/query', String(res.status)), json)).toBe('');
  return { status: res.status, json };
};
const sum = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) * 1e10) / 1e10;

it('sums the metrics asked by model, most requests first, over this workspace only', async () => {
  const r = await query({ metrics: ['request_count', 'usage'], dimensions: ['model'] });
  expect(r.status).toBe(200);
  expect(r.json.data).toEqual({
    data: [
      { model: 'local/echo', request_count: 2, usage: sum(costs.get('local/echo')!) },
      { model: 'local/lorem', request_count: 1, usage: sum(costs.get('local/lorem')!) },
    ],
    metadata: { query_time_ms: expect.any(Number), row_count: 2, truncated: false },
  });
});

it('buckets by time, filters, orders and cuts as asked', async () => {
  const now = t.emu.store.now();
  const day = new Date(Math.floor(now / 86_400_000) * 86_400_000).toISOString();
  const byDay = await query({ metrics: ['prompt_tokens'], granularity: 'day', filters: [{ field: 'model', operator: 'eq', value: 'local/lorem' }] });
  expect(byDay.json.data.data).toEqual([{ date__day: day, prompt_tokens: expect.any(Number) }]);
  expect(byDay.json.data.data[0].prompt_tokens).toBeGreaterThan(0);

  const cut = await query({ metrics: ['usage'], dimensions: ['model'], order_by: { field: 'model', direction: 'desc' }, limit: 1 });
  expect(cut.json.data.data).toEqual([{ model: 'local/lorem', usage: sum(costs.get('local/lorem')!) }]);
  expect(cut.json.data.metadata).toMatchObject({ row_count: 1, truncated: true });

  const none = await query({ metrics: ['request_count'], time_range: { start: '2001-01-01T00:00:00Z', end: '2001-01-08T00:00:00Z' } });
  expect(none.json.data.data).toEqual([]);
  const notIn = await query({ metrics: ['request_count'], filters: [{ field: 'model', operator: 'not_in', value: ['local/echo'] }] });
  expect(notIn.json.data.data).toEqual([{ request_count: 1 }]);
});

it('refuses what it cannot answer with a 400 naming it; a standard key with a 403', async () => {
  expect(await query({ metrics: ['tokens'] })).toMatchObject({ status: 400, json: { error: { message: expect.stringContaining('metrics: "tokens" is not one of request_count, usage') } } });
  expect(await query({ dimensions: ['model'] })).toMatchObject({ status: 400, json: { error: { message: 'metrics must have 1 to 6 entries' } } });
  expect(await query({ metrics: ['usage'], granularity: 'year' })).toMatchObject({ status: 400 });
  expect(await query({ metrics: ['usage'], filters: [{ field: 'model', operator: 'in', value: 'local/echo' }] })).toMatchObject({ status: 400, json: { error: { message: 'filters[0].value must be a list for in' } } });
  expect(await query({ metrics: ['usage'], classifier_dimensions: { classifier_id: '550e8400-e29b-41d4-a716-446655440000' } })).toMatchObject({ status: 400 });
  expect((await query({ metrics: ['usage'] }, t.apiKey)).status).toBe(403);
});

it('refuses names of Object.prototype as metrics, dimensions and filter fields with a 400', async () => {
  // Were: metrics "constructor" a 500; dimensions "constructor" a 200 carrying each kept generation
  // whole (its key's hash among it); a filter on "toString" a silent 200 of nothing.
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    expect(await query({ metrics: [name] })).toMatchObject({ status: 400, json: { error: { message: expect.stringContaining(`metrics: "${name}" is not one of`) } } });
    expect(await query({ metrics: ['usage'], dimensions: [name] })).toMatchObject({ status: 400, json: { error: { message: expect.stringContaining(`dimensions: "${name}" is not one of`) } } });
    expect(await query({ metrics: ['usage'], filters: [{ field: name, operator: 'eq', value: 'x' }] })).toMatchObject({ status: 400, json: { error: { message: expect.stringContaining('filters[0].field must be one of') } } });
  }
  // A group_limit is checked though no dimension is asked (was: "x" let through unread).
  expect(await query({ metrics: ['usage'], group_limit: 'x' })).toMatchObject({ status: 400, json: { error: { message: 'group_limit must be a whole number of at least 1' } } });
});
