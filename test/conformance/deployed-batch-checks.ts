/**
 * Issue 42: batches as the service is deployed (shared/reference/openrouter-notes-not-in-spec.md; the
 * OpenAPI has none): what `router batch create` sends to /beta/batches (`endpoint` and `model` before
 * `requests` in the text, as the service stream-parses it), and the batch object before and after it
 * completes (usage and results null until then; then usage with cost and is_byok, results inline).
 */
import { Ajv } from 'ajv';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestEnv } from '../helpers.js';
import { attemptRow, type Row } from './checks.js';

type RowMaker = (operation: string, check: string) => Row;

const STATUSES = ['validating', 'in_progress', 'finalizing', 'completed', 'failed', 'expired', 'cancelling', 'cancelled'];
const counts = { type: 'object', required: ['total', 'completed', 'failed'], properties: { total: { type: 'integer' }, completed: { type: 'integer' }, failed: { type: 'integer' } } };
const common = {
  id: { type: 'string' },
  object: { const: 'batch' },
  endpoint: { enum: ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'] },
  model: { type: 'string' },
  completion_window: { const: '24h' },
  status: { enum: STATUSES },
  created_at: { type: 'integer' },
  finalized_at: { type: ['integer', 'null'] },
  request_counts: counts,
  error: {},
};
const usage = { type: 'object', required: ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost', 'is_byok'], properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' }, total_tokens: { type: 'integer' }, cost: { type: 'number' }, is_byok: { type: 'boolean' } } };
const answered = { type: 'object', required: ['status_code', 'request_id', 'body'], properties: { status_code: { type: 'integer' }, request_id: { type: 'string' }, body: { type: 'object' } } };
// Exactly one of response and error is non-null; a non-null error's shape is not documented.
const resultItem = {
  type: 'object',
  required: ['id', 'custom_id', 'response', 'error'],
  properties: { id: { type: 'string' }, custom_id: { type: 'string' } },
  oneOf: [
    { properties: { response: answered, error: { type: 'null' } } },
    { properties: { response: { type: 'null' }, error: { not: { type: 'null' } } } },
  ],
};
const shape = (extra: Record<string, unknown>) => ({ type: 'object', required: [...Object.keys(common), 'usage', 'results'], properties: { ...common, ...extra } });

const must = (ok: boolean, what: string) => {
  if (!ok) throw new Error(what);
};

export async function deployedBatchChecks(t: TestEnv, row: RowMaker): Promise<void> {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const open = ajv.compile(shape({ status: { enum: STATUSES.filter((s) => s !== 'completed') }, usage: { type: 'null' }, results: { type: 'null' } }));
  const done = ajv.compile(shape({ status: { const: 'completed' }, usage, results: { type: 'array', items: resultItem } }));
  const file = join(t.dir, 'deployed-conformance.jsonl');
  // Two answered requests and one the service refuses (temperature past 2): a failed result has `response: null`.
  const lines = [...['a', 'b'].map((c) => ({ custom_id: c, body: { messages: [{ role: 'user', content: c }] } })), { custom_id: 'refused', body: { messages: [{ role: 'user', content: 'c' }], temperature: 9 } }];
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  const get = async (id: string) => (await fetch(`${t.apiRoot}/beta/batches/${id}`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json() as Promise<unknown>;
  let id = '';

  await attemptRow(row('batch create', 'deployed: POST /beta/batches, endpoint and model first'), async () => {
    t.clearRequests();
    const r = await t.run(['batch', 'create', file, '--model', 'local/echo']);
    must(r.code === 0, `exit ${r.code}: ${r.stderr}`);
    id = r.stdout.trim();
    const sent = t.requests().filter((q) => q.method === 'POST' && q.path === '/beta/batches').at(-1);
    const keys = Object.keys((sent?.body ?? {}) as object);
    must(keys.indexOf('endpoint') >= 0 && keys.indexOf('model') >= 0 && keys.indexOf('endpoint') < keys.indexOf('requests') && keys.indexOf('model') < keys.indexOf('requests'), `keys in order ${keys.join(', ')}`);
  });
  await attemptRow(row('batch get', 'deployed: usage and results null until completed'), async () => {
    const b = await get(id);
    must(open(b) || done(b), JSON.stringify(open.errors ?? []).slice(0, 300));
  });
  await attemptRow(row('batch get', 'deployed: completed: usage with cost, results inline, a failed one null'), async () => {
    const w = await t.run(['batch', 'get', id, '--watch', '--interval', '0.05']);
    must(w.code === 0, `watch exit ${w.code}: ${w.stderr}`);
    const b = (await get(id)) as { results?: { custom_id: string; response: unknown }[] };
    must(done(b), JSON.stringify(done.errors ?? []).slice(0, 300));
    must(b.results?.find((r) => r.custom_id === 'refused')?.response === null, `no failed result among ${JSON.stringify(b.results).slice(0, 300)}`);
  });
  await attemptRow(row('batch list', 'deployed: no listing; router lists its own'), async () => {
    const listing = await fetch(`${t.apiRoot}/beta/batches`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    must(listing.status === 405 || listing.status === 404, `GET /beta/batches: ${listing.status}`);
    const r = await t.run(['batch', 'list', '--json']);
    must(r.code === 0 && r.stdout.includes(id) && /made from this machine/.test(r.stderr), `batch list: exit ${r.code}, ${r.stderr}`);
  });
}
