/**
 * The emulator's account routes against the official OpenAPI (answers and the queries the client
 * sends), and the map of which emulator routes the OpenAPI describes: each one must be checked here
 * or in checks.ts, and each one it does not describe is listed with the reason (NOT_IN_OPENAPI).
 * Used by test/conformance-openapi.test.ts.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import { RouterClient } from '../../src/client/index.js';
import { runInProcess } from '../support/inprocess.js';
import type { TestEnv } from '../helpers.js';
import { answerValidator, exampleRequest, openApiDoc, requestValidator, violations } from './openapi-fixtures.js';
import type { Row } from './checks.js';

/** Emulator routes (under {api_root}) the OpenAPI describes, and where their answers are checked. */
export const CHECKED_ROUTES: Record<string, string> = {
  'POST /v1/chat/completions': 'test/conformance/checks.ts',
  'POST /v1/responses': 'test/conformance/checks.ts',
  'POST /v1/embeddings': 'test/conformance/checks.ts',
  'POST /v1/audio/speech': 'test/conformance/checks.ts',
  'POST /v1/messages': 'test/conformance/messages-checks.ts (the shapes), test/inprocess/anthropic-sdk.test.ts (the SDK parses them)',
  'GET /v1/models': 'here',
  'GET /v1/embeddings/models': 'here',
  'GET /v1/models/user': 'here',
  'GET /v1/models/count': 'here',
  'GET /v1/models/x/x/endpoints': 'here',
  'GET /v1/model/x/x': 'here',
  'GET /v1/key': 'here',
  'GET /v1/credits': 'here',
  'POST /v1/keys': 'here',
  'GET /v1/keys': 'here',
  'GET /v1/keys/x': 'here',
  'PATCH /v1/keys/x': 'here',
  'DELETE /v1/keys/x': 'here',
  'GET /v1/activity': 'here',
  'GET /v1/generation': 'test/conformance/metadata-checks.ts (the SDK parses it), test/inprocess/generation.test.ts (the schema)',
  'GET /v1/generation/content': 'here',
  'POST /v1/generation/feedback': 'here',
  'GET /v1/endpoints/zdr': 'here',
  'GET /v1/analytics/meta': 'here',
  'POST /v1/analytics/query': 'here (answers), test/inprocess/analytics-query.test.ts (what they say)',
  'GET /v1/providers': 'here',
  'GET /v1/images/models': 'here',
  'GET /v1/videos/models': 'here',
};

/** Emulator routes the OpenAPI does not describe, and why they are served anyway. */
export const NOT_IN_OPENAPI: Record<string, string> = {
  'POST /v1/batches': 'api.md: batches at {base_url}/batches (the real service has them under /api/beta/batches, see the notes)',
  'GET /v1/batches': 'api.md: the batch list (not documented for the real service)',
  'GET /v1/batches/x': "api.md: a batch with its results",
  'POST /alpha/decisions': 'api.md and the SDK: decisions at {api_root}/alpha/decisions',
  'GET /v1/models/x': "the openai SDK's models.retrieve(id) asks it (/v1/models/local%2Fecho)",
};

/** Every `METHOD /v1/path` the OpenAPI describes, with `x` for each path parameter. */
export function openApiRoutes(): string[] {
  const doc = openApiDoc() as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map((m) => `${m.toUpperCase()} /v1${path.replace(/\{[^}]+\}/g, 'x')}`),
  );
}

/** Whether the emulator serves a route: anything but its "No route" 404 and 405 says it does. */
export async function serves(t: TestEnv, route: string): Promise<boolean> {
  const [method, path] = route.split(' ') as [string, string];
  const res = await fetch(`${t.apiRoot}${path}`, { method, headers: { authorization: `Bearer ${t.managementKey}`, 'content-type': 'application/json' }, body: method === 'GET' || method === 'DELETE' ? undefined : '{}' });
  const text = await res.text();
  return !((res.status === 404 && text.includes('No route for')) || res.status === 405);
}

/** The answers of the account routes, and the queries the client sends them, against the OpenAPI. */
export async function accountAnswers(t: TestEnv, row: (operation: string, check: string) => Row): Promise<void> {
  const check = (r: Row, problems: string, label: string) => {
    r.checked++;
    if (problems) {
      r.failed++;
      r.failures.push(`${label}: ${problems}`);
    }
  };
  const get = async (path: string, key = t.apiKey) => {
    const res = await fetch(`${t.apiRoot}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: String(res.status), body: await res.json() };
  };
  const answer = async (r: Row, opPath: string, path: string, key?: string, method: 'get' | 'post' | 'patch' | 'delete' = 'get', body?: unknown) => {
    const res = method === 'get' ? await get(path, key) : await (async () => {
      const x = await fetch(`${t.apiRoot}${path}`, { method: method.toUpperCase(), headers: { authorization: `Bearer ${key ?? t.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: String(x.status), body: await x.json() };
    })();
    check(r, violations(answerValidator(method, opPath, res.status), res.body), `${method.toUpperCase()} ${path} (${res.status})`);
    return res.body;
  };

  const models = row('models', 'answers (ModelsListResponse, 400)');
  for (const q of ['', '?output_modalities=all', '?limit=2&output_modalities=all', '?offset=6&limit=2&output_modalities=all', '?output_modalities=embeddings,speech', '?limit=0', '?offset=-1', '?q=echo&supported_parameters=tools', '?input_modalities=image&sort=pricing-high-to-low&limit=1', '?category=programming', '?category=poetry', '?sort=cheap', '?context=lots']) await answer(models, '/models', `/v1/models${q}`);
  await answer(models, '/models', '/v1/models', t.managementKey);
  const more = row('embedding models, count, endpoints', 'answers (listEmbeddingsModels, listModelsUser, listModelsCount, listEndpoints and getModel 200, 404)');
  for (const q of ['', '?limit=1', '?offset=1']) await answer(more, '/embeddings/models', `/v1/embeddings/models${q}`);
  for (const q of ['', '?limit=1', '?offset=1']) await answer(more, '/models/user', `/v1/models/user${q}`);
  for (const q of ['', '?output_modalities=all']) await answer(more, '/models/count', `/v1/models/count${q}`);
  // provider_name is a closed enum of the service's providers, which local-alpha and local-beta are
  // not (docs/conformance.md): the answer is checked with each endpoint's named as one it lists.
  const endpoints = answerValidator('get', '/models/{author}/{slug}/endpoints');
  for (const id of ['local/echo', 'local/unavailable', 'local/tts']) {
    const body = (await get(`/v1/models/${id}/endpoints`)).body;
    for (const e of body.data.endpoints) e.provider_name = 'OpenAI';
    check(more, violations(endpoints, body), `GET /v1/models/${id}/endpoints (200)`);
  }
  await answer(more, '/models/{author}/{slug}/endpoints', '/v1/models/local/nope/endpoints');
  for (const id of ['local/echo', 'local/tts', 'local/nope']) await answer(more, '/model/{author}/{slug}', `/v1/model/${id}`);

  const key = row('key', 'answers (getCurrentKey, 401)');
  for (const k of [t.apiKey, t.managementKey, 'sk-wrong']) await answer(key, '/key', '/v1/key', k);
  const status = await runInProcess(['auth', 'status', '--json'], { env: t.env });
  check(key, violations(answerValidator('get', '/key'), { data: JSON.parse(status.stdout).details }), 'router auth status --json details');

  const credits = row('credits', 'answers (getCredits, 401, 403)');
  for (const k of [t.managementKey, t.apiKey, 'sk-wrong']) await answer(credits, '/credits', '/v1/credits', k);

  const keys = row('keys', 'answers (createKeys 201, 400, 403)');
  for (const [k, body] of [[t.managementKey, { name: 'ci' }], [t.managementKey, { name: '' }], [t.apiKey, { name: 'x' }]] as const) await answer(keys, '/keys', '/v1/keys', k, 'post', body);
  const made = await answer(keys, '/keys', '/v1/keys', t.managementKey, 'post', { name: 'capped', limit: 5, limit_reset: 'weekly', include_byok_in_limit: true, expires_at: '2099-01-01T00:00:00Z' });
  const listing = row('keys: list, get, update, delete', 'answers (list, getKey, updateKeys, deleteKeys 200, 400, 404)');
  for (const q of ['', '?include_disabled=true&offset=1', '?offset=x']) await answer(listing, '/keys', `/v1/keys${q}`, t.managementKey);
  const one = `/v1/keys/${made.data.hash}`;
  await answer(listing, '/keys/{hash}', one, t.managementKey);
  for (const body of [{ limit: 7, disabled: true, name: 'n' }, { limit_reset: 'yearly' }]) await answer(listing, '/keys/{hash}', one, t.managementKey, 'patch', body);
  await answer(listing, '/keys/{hash}', one, t.managementKey, 'delete');
  await answer(listing, '/keys/{hash}', one, t.managementKey);

  const activity = row('activity', 'answers (getUserActivity 200, 400, 403)');
  await runInProcess(['chat', '--model', 'local/echo', '--no-log', 'hi'], { env: t.env });
  // The service takes completed UTC days only: yesterday answers, today is a 400.
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const today = new Date().toISOString().slice(0, 10);
  for (const q of ['', `?date=${yesterday}`, `?date=${today}`, '?group_by=workspace', '?date=2001-01-01']) await answer(activity, '/activity', `/v1/activity${q}`, t.managementKey);
  await answer(activity, '/activity', '/v1/activity', t.apiKey);

  const stored = row('generation content and feedback, ZDR endpoints, analytics meta', 'answers (listGenerationContent, submitGenerationFeedback, listEndpointsZdr, getAnalyticsMeta 200, 400, 403, 404)');
  const chatted = await (await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }) })).json();
  for (const [k, id] of [[t.managementKey, chatted.id], [t.managementKey, 'gen-none'], [t.apiKey, chatted.id]]) await answer(stored, '/generation/content', `/v1/generation/content?id=${id}`, k);
  for (const body of [{ generation_id: chatted.id, category: 'other', comment: 'ok' }, { generation_id: chatted.id, category: 'rude' }, { generation_id: 'gen-none', category: 'other' }]) await answer(stored, '/generation/feedback', '/v1/generation/feedback', t.managementKey, 'post', body);
  // provider_name as above: each endpoint's named as one the OpenAPI lists.
  const zdr = (await get('/v1/endpoints/zdr')).body;
  for (const e of zdr.data) e.provider_name = 'OpenAI';
  check(stored, violations(answerValidator('get', '/endpoints/zdr'), zdr), 'GET /v1/endpoints/zdr (200)');
  for (const k of [t.managementKey, t.apiKey]) await answer(stored, '/analytics/meta', '/v1/analytics/meta', k);
  const lists = row('providers, image and video models', 'answers (listProviders, listImageModels, listVideosModels 200)');
  for (const [opPath, path] of [['/providers', '/v1/providers'], ['/images/models', '/v1/images/models'], ['/videos/models', '/v1/videos/models']] as const) await answer(lists, opPath, path);
  const analytics = row('analytics query', 'requests (the OpenAPI example and more) and answers (queryAnalytics 200, 400, 403)');
  // Requests the OpenAPI allows (each checked against it too), then one it does not, one it allows that the emulator refuses, and a standard key.
  const allowed = [
    exampleRequest('post', '/analytics/query'),
    { metrics: ['request_count', 'usage', 'latency'], dimensions: ['model', 'provider_name'], granularity: 'hour', filters: [{ field: 'model', operator: 'in', value: ['local/echo'] }], order_by: { field: 'usage', direction: 'desc' }, limit: 1 },
    { metrics: ['prompt_tokens'], dimensions: ['api_key'], group_limit: 1 },
  ];
  for (const body of allowed) {
    check(analytics, violations(requestValidator('post', '/analytics/query'), body), `request ${JSON.stringify(body).slice(0, 80)}`);
    await answer(analytics, '/analytics/query', '/v1/analytics/query', t.managementKey, 'post', body);
  }
  for (const [k, body] of [[t.managementKey, { metrics: [] }], [t.managementKey, { metrics: ['request_count'], granularity: 'year' }], [t.apiKey, { metrics: ['request_count'] }]] as const) {
    await answer(analytics, '/analytics/query', '/v1/analytics/query', k, 'post', body);
  }

  // What the client sends: the model list's queries (paged) and the key check, as the OpenAPI's parameters allow.
  const sent = row('models, key, keys, activity', 'queries the client sends (OpenAPI parameters)');
  t.clearRequests();
  await t.admin('models', { page_size: 2 });
  const client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.apiRoot, maxRetries: 0 });
  const admin = new RouterClient({ apiKey: t.managementKey, apiRoot: t.apiRoot, maxRetries: 0 });
  try {
    await client.models.list();
    await client.key.get();
    await admin.keys.list({ offset: 1, includeDisabled: true });
    await admin.activity.list({ date: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10), groupBy: 'workspace' });
  } finally {
    await client.close();
    await admin.close();
    await t.admin('models', { page_size: 500 });
  }
  for (const q of t.requests()) check(sent, queryViolations(q.method.toLowerCase(), q.path.replace(/^\/v1/, ''), q.query), `${q.method} ${q.path}`);
}

let queryAjv: InstanceType<typeof Ajv2020.default> | undefined;
let parameterDoc: { paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: object }[] }>> } | undefined;

/** Why a query does not fit the operation's parameters (unknown names, wrong values), or ''. */
function queryViolations(method: string, path: string, query: Record<string, string[]>): string {
  parameterDoc ??= openApiDoc() as unknown as NonNullable<typeof parameterDoc>;
  const params = (parameterDoc!.paths[path]?.[method]?.parameters ?? []).filter((p) => p.in === 'query');
  const ajv = (queryAjv ??= new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, validateFormats: false, coerceTypes: true }));
  const problems: string[] = [];
  for (const [name, values] of Object.entries(query)) {
    const param = params.find((p) => p.name === name);
    if (!param) problems.push(`${name} is no parameter of ${method.toUpperCase()} ${path}`);
    else for (const v of values) if (!ajv.validate(param.schema, v)) problems.push(`${name}=${v}: ${ajv.errorsText()}`);
  }
  return problems.join('; ');
}
