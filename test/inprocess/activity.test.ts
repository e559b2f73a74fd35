import { afterAll, beforeAll, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { APIError, RouterClient } from '../../src/client/index.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';

// GET /v1/activity (OpenAPI getUserActivity) from the generations the emulator served, through client.activity.
const DAY = 86_400_000;
let t: CliEnv;
let admin: RouterClient;
beforeAll(async () => {
  t = await startCliEnv();
  admin = new RouterClient({ apiKey: t.managementKey, apiRoot: t.apiRoot, maxRetries: 0 });
});
afterAll(async () => {
  await admin?.close();
  await t.close();
});

const chat = async (key: string, model: string) => {
  const r = await t.run(['chat', '--no-stream', '--json', '--model', model, 'write nine words please'], { env: { ROUTER_API_KEY: key, ROUTER_NO_LOG: '1' } });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).usage as { cost: number; prompt_tokens: number; completion_tokens: number };
};

it('sums each day, model and endpoint; filters by date and key; answers as the OpenAPI has it', async () => {
  const made = await admin.keys.create({ name: 'activity' });
  const a = await chat(made.key, 'local/echo');
  const b = await chat(made.key, 'local/echo');
  const c = await chat(t.apiKey, 'local/lorem');
  // As the service, the emulator answers completed UTC days only: today's calls show tomorrow.
  expect(await admin.activity.list({ apiKeyHash: made.data.hash })).toEqual([]);
  const today = new Date(t.emu.store.now()).toISOString().slice(0, 10);
  await expect(admin.activity.list({ date: today })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('last 30 (completed) UTC days') });
  t.emu.store.advanceClock(DAY);

  const res = await fetch(`${t.apiRoot}/v1/activity`, { headers: { authorization: `Bearer ${t.managementKey}` } });
  const body = await res.json();
  expect(violations(answerValidator('get', '/activity', '200'), body)).toBe('');
  const rows = await admin.activity.list();
  // Summed over the model's rows: calls either side of midnight UTC are two days' rows.
  const of = (model: string) => rows.filter((r) => r.model === model);
  const sum = (model: string, field: 'requests' | 'prompt_tokens' | 'completion_tokens' | 'usage') => of(model).reduce((n, r) => n + r[field], 0);
  expect(of('local/echo')[0]).toMatchObject({ model_permaslug: 'local/echo', provider_name: expect.any(String), byok_usage_inference: 0, date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/) });
  expect([sum('local/echo', 'requests'), sum('local/echo', 'prompt_tokens'), sum('local/echo', 'completion_tokens')]).toEqual([2, a.prompt_tokens + b.prompt_tokens, a.completion_tokens + b.completion_tokens]);
  expect(sum('local/echo', 'usage')).toBeCloseTo(a.cost + b.cost, 12);
  expect([sum('local/lorem', 'requests'), sum('local/lorem', 'prompt_tokens')]).toEqual([1, c.prompt_tokens]);

  // One key's only: its two calls.
  expect((await admin.activity.list({ apiKeyHash: made.data.hash })).reduce((n, r) => n + (r.model === 'local/echo' ? r.requests : 100), 0)).toBe(2);
  const day = rows[0]!.date;
  expect(await admin.activity.list({ date: day })).toEqual(rows.filter((r) => r.date === day));
  // The workspace by its UUID, as the OpenAPI has it (was "default"); the filter takes it, and the old name still.
  const split = await admin.activity.list({ groupBy: 'workspace' });
  const uuid = split[0]!.workspace_id!;
  expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(split.every((r) => r.workspace_id === uuid)).toBe(true);
  expect(await admin.activity.list({ groupBy: 'workspace', workspaceId: uuid })).toEqual(split);
  expect(await admin.activity.list({ groupBy: 'workspace', workspaceId: 'default' })).toEqual(split);
  expect(uuid).toBe(((await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${t.managementKey}` } })).json()) as { data: { workspace_id: string } }).data.workspace_id);
});

it('user_id, an organization member filter, is a 400: the emulator has no organizations (was accepted and ignored)', async () => {
  await expect(admin.activity.list({ userId: 'user_1' })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('not an organization') });
});

it('a date past the last 30 days is a 400; a standard key a 403', async () => {
  await expect(admin.activity.list({ date: '2001-01-01' })).rejects.toMatchObject({ status: 400 });
  const standard = new RouterClient({ apiKey: t.apiKey, apiRoot: t.apiRoot, maxRetries: 0 });
  const err = await standard.activity.list().catch((e: unknown) => e);
  await standard.close();
  expect(err).toBeInstanceOf(APIError);
  expect(err).toMatchObject({ status: 403 });
});

it('router usage --activity: the same sums, in the rows and columns router usage prints', async () => {
  const made = await admin.keys.create({ name: 'cli-activity' });
  await chat(made.key, 'local/lorem');
  t.emu.store.advanceClock(DAY);
  const env = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  const rows = (await admin.activity.list({ apiKeyHash: made.data.hash })).filter((r) => r.model === 'local/lorem');
  const r = await t.run(['usage', '--activity', '--by', 'model', '--key', made.data.hash], { env });
  expect(r.code, r.stderr).toBe(0);
  const tokens = rows[0]!.prompt_tokens + rows[0]!.completion_tokens;
  expect(r.stdout.split('\n')[0]).toBe(`local/lorem\t1\t${rows[0]!.prompt_tokens}\t${rows[0]!.completion_tokens}\t${tokens}\t${r.stdout.split('\n')[1]!.split('\t')[5]}`);
  expect(r.stdout.split('\n')[1]).toMatch(/^total\t1\t/);
  const json = JSON.parse((await t.run(['usage', '--activity', '--json'], { env })).stdout);
  expect(json.total.calls).toBe((await admin.activity.list()).reduce((n, x) => n + x.requests, 0));

  const before = t.requests().length;
  for (const args of [['--activity', '--by', 'command'], ['--key', made.data.hash], ['--activity', '--key', 'nope'], ['--activity', '--reconcile']]) {
    const bad = await t.run(['usage', ...args], { env });
    expect(bad.code, args.join(' ')).toBe(2);
  }
  expect(t.requests().length).toBe(before);
  expect(await t.run(['usage', '--activity'])).toMatchObject({ code: 3, stderr: expect.stringContaining('usage --activity needs a management key (this is the standard API key)') });
});

it('sums a row’s usage to the 1e-10 USD the costs move by, without float noise', async () => {
  const made = await admin.keys.create({ name: 'activity-sum' });
  // Costs of many sizes on one row: summed as floats, such a row said e.g. 0.00030000000000000003.
  for (let i = 1; i <= 12; i++) {
    const res = await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${made.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'word '.repeat(i * 7) }] }) });
    expect(res.status).toBe(200);
  }
  // Today's calls are listed once the day is over, as the service lists completed days only.
  t.emu.store.advanceClock(DAY);
  const rows = await admin.activity.list({ apiKeyHash: made.data.hash });
  expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(12);
  for (const r of rows) expect(r.usage).toBe(Math.round(r.usage * 1e10) / 1e10);
});

it('router usage --activity --since further back than the service keeps: said on stderr, not summed short in silence', async () => {
  const env = { ROUTER_MANAGEMENT_KEY: t.managementKey };
  const far = await t.run(['usage', '--activity', '--since', '90d', '--json'], { env });
  expect(far.code, far.stderr).toBe(0);
  JSON.parse(far.stdout);
  // Was: the 30 days the service keeps, as if they were the 90 asked, and nothing said.
  expect(far.stderr).toMatch(/^note: the service keeps its last 30 days of activity: nothing before \d{4}-\d\d-\d\d is counted \(--since asked from \d{4}-\d\d-\d\d\)\n$/);
  // Within them (the default is 30d): nothing to say.
  for (const since of [[], ['--since', '7d']]) expect((await t.run(['usage', '--activity', ...since], { env })).stderr).toBe('');
});
