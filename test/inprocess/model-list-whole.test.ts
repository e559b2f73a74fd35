import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testGateway } from '../support/upstreams.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';

// The OpenAPI's listModels, listModelsUser (served from the same list) and listEmbeddingsModels: "When both offset and limit are omitted, the
// full list is returned"; a limit is 1 to 1000, 500 by default. Before, a list of more than 500
// models was cut at 500 when the query named neither.
const N = 501;
let gw: Awaited<ReturnType<typeof testGateway>>;

beforeAll(async () => {
  const ids = (kind: string) => Array.from({ length: N }, (_, i) => `test/${kind}${i}: up${i}`).join(', ');
  gw = await testGateway(`providers:\n  - name: up\n    base_url: "http://127.0.0.1:9/v1"\n    models: { ${ids('chat')} }\n    embedding_models: { ${ids('vec')} }\nlocal_models: false\n`);
});
afterAll(() => gw?.close());

const get = (path: string) => gw.get<{ data: { id: string }[]; total_count: number; links: { next: string | null } }>(path);

describe.each([['/v1/embeddings/models', '/embeddings/models', 'vec'], ['/v1/models', '/models', 'chat'], ['/v1/models/user', '/models/user', 'chat']])('%s', (path, op, kind) => {
  it('answers the whole list when the query names neither offset nor limit, and pages when it names one', async () => {
    const whole = await get(path);
    expect(violations(answerValidator('get', op), whole.body)).toBe('');
    expect([whole.body.data.length, whole.body.total_count, whole.body.links.next]).toEqual([N, N, null]);
    expect(whole.body.data[N - 1]!.id).toBe(`test/${kind}${N - 1}`);
    const first = await get(`${path}?offset=0`);
    expect([first.body.data.length, first.body.links.next]).toEqual([500, `/api${path}?offset=500&limit=500`]);
    const last = await get(first.body.links.next!.replace(/^\/api/, ''));
    expect(last.body.data.map((m) => m.id)).toEqual([`test/${kind}500`]);
    expect((await get(`${path}?limit=2`)).body.data.length).toBe(2);
    expect((await get(`${path}?limit=1001`)).status).toBe(400);
  });
});

describe('the operator page size (POST /_emulator/models, the model list paged as the service was seen to)', () => {
  it('pages /v1/models only: /v1/embeddings/models answers its whole list, as the OpenAPI says', async () => {
    const operator = (size: number) => fetch(`${gw.gateway.apiRoot}/_emulator/models`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.operatorKey()}`, 'content-type': 'application/json' }, body: JSON.stringify({ page_size: size }) });
    expect((await operator(2)).status).toBe(200);
    try {
      const models = await get('/v1/models');
      expect([models.body.data.length, models.body.links.next]).toEqual([2, '/api/v1/models?offset=2&limit=2']);
      // Before: 2 and a next page, the operator's size for the model list taken for the embeddings listing too.
      const vectors = await get('/v1/embeddings/models');
      expect([vectors.body.data.length, vectors.body.total_count, vectors.body.links.next]).toEqual([N, N, null]);
      expect((await get('/v1/embeddings/models?offset=1')).body.data.length).toBe(500);
    } finally {
      await operator(500);
    }
  });
});
