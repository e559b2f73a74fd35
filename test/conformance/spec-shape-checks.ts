/**
 * Answers of the batch operations checked against api.md's own tables (the OpenAPI description
 * has no batches): every field of the type its row gives; an `object` row is never null.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { post, type TestEnv } from '../helpers.js';
import type { Row } from './checks.js';
import { waitBound } from '../support/until.js';

const int = { type: 'integer' };
const str = { type: 'string' };
const usage = {
  type: 'object',
  required: ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost'],
  properties: {
    prompt_tokens: int,
    completion_tokens: int,
    total_tokens: int,
    cost: { type: 'number' },
    is_byok: { type: 'boolean' },
    cache_creation: { type: 'object' },
    completion_tokens_details: { type: 'object' },
    prompt_tokens_details: { type: 'object' },
    cost_details: { type: 'object' },
    iterations: { type: 'array', items: { type: 'object' } },
    server_tool_use: { type: 'object' },
    service_tier: str,
    speed: str,
  },
};
const resultItem = {
  type: 'object',
  required: ['custom_id', 'id', 'error', 'response'],
  properties: {
    custom_id: str,
    id: str,
    error: {
      oneOf: [
        { type: 'null' },
        { type: 'object', required: ['type', 'message', 'param'], properties: { type: str, message: str, param: { type: ['string', 'null'] }, error_type: str } },
      ],
    },
    response: { type: 'object', required: ['body', 'request_id', 'status_code'], properties: { body: { type: 'object' }, request_id: str, status_code: int } },
  },
};
const batchFields = {
  id: str,
  object: { const: 'batch' },
  endpoint: str,
  model: str,
  completion_window: { const: '24h' },
  created_at: int,
  finalized_at: { type: ['integer', 'null'] },
  status: { enum: ['validating', 'in_progress', 'finalizing', 'completed', 'failed', 'expired', 'cancelling', 'cancelled'] },
  request_counts: { type: 'object', required: ['total', 'completed', 'failed'], properties: { total: int, completed: int, failed: int } },
  error: { oneOf: [{ type: 'null' }, { type: 'object', required: ['message'], properties: { message: str } }] },
  usage,
};
const batch = (results: object) => ({ type: 'object', required: Object.keys(batchFields), properties: { ...batchFields, results } });

export async function specShapeChecks(t: TestEnv, row: (op: string, check: string) => Row): Promise<void> {
  const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
  const shapes = {
    running: ajv.compile({ ...batch({}), not: { required: ['results'] } }),
    terminal: ajv.compile({ ...batch({ type: 'array', items: resultItem }), required: [...Object.keys(batchFields), 'results'] }),
    owed: ajv.compile({ ...batch({ type: 'null' }), required: [...Object.keys(batchFields), 'results'] }),
    page: ajv.compile({
      type: 'object',
      required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
      properties: { object: { const: 'list' }, data: { type: 'array', items: { ...batch({}), not: { required: ['results'] } } }, first_id: { type: ['string', 'null'] }, last_id: { type: ['string', 'null'] }, has_more: { type: 'boolean' } },
    }),
  };
  const check = (r: Row, validate: ValidateFunction, value: unknown, label: string) => {
    r.checked++;
    if (!validate(value)) {
      r.failed++;
      r.failures.push(`${label}: ${(validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath} ${e.message}`).join('; ')}`);
    }
  };
  const get = async (path: string, key = t.apiKey) => {
    const res = await fetch(`${t.apiRoot}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, json: (await res.json()) as { status?: string } };
  };
  const settle = async (id: string, key?: string) => {
    // Until it ends (300 looks, 6 s, can be too few on a loaded machine).
    for (const end = Date.now() + waitBound(); Date.now() < end; ) {
      const b = await get(`/v1/batches/${id}`, key);
      if (b.status !== 200 || ['completed', 'failed', 'expired', 'cancelled'].includes(b.json.status!)) return b;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`batch ${id} did not end`);
  };
  const requests = [
    { custom_id: 'ok', body: { messages: [{ role: 'user', content: 'x' }] } },
    { custom_id: 'bad', body: { messages: [{ role: 'user', content: 'x' }], temperature: 9 } },
  ];
  const created = await post(t, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/echo', requests });
  check(row('batches', 'api.md: Batch on create (202)'), shapes.running, created.json, 'create');
  check(row('batches', 'api.md: Batch list page'), shapes.page, (await get('/v1/batches')).json, 'list');
  const done = await settle(created.json.id);
  check(row('batches', 'api.md: Batch with results (a failed item too)'), shapes.terminal, done.json, 'get');

  const poor = await t.admin('workspaces', { credits: 0.0000001 });
  const owed = await post(t, '/v1/batches', { endpoint: '/v1/chat/completions', model: 'local/lorem', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'write 300 words' }] } }] }, {}, poor.api_key);
  const got = await settle(owed.json.id, poor.api_key);
  const r402 = row('batches', 'api.md: Get a batch 402 (metadata, results null)');
  if (got.status === 402) check(r402, shapes.owed, got.json, '402');
  else {
    r402.checked++;
    r402.failed++;
    r402.failures.push(`expected 402, got ${got.status}`);
  }
}
