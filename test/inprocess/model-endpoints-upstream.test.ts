import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testGateway } from '../support/upstreams.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';

// A gateway's upstream models have endpoints too (before: 404 for all but local/… models): one per
// provider of the providers file that serves the model, named as the file names it, at its prices.
let gw: Awaited<ReturnType<typeof testGateway>>;

const PROVIDERS = `providers:
  - name: alpha
    base_url: "http://127.0.0.1:9/v1"
    models: { test/m: m-up }
    prices: { test/m: { prompt: 0.000002, completion: 0.000008 } }
    max_completion_tokens: { test/m: 4096 }
  - name: beta
    base_url: "http://127.0.0.1:9/v1"
    models: { test/m: m, test/solo: solo }
    embedding_models: { test/vec: vec }
`;

beforeAll(async () => {
  gw = await testGateway(PROVIDERS);
});
afterAll(() => gw?.close());

const get = (path: string) => gw.get<any>(path);
/** The answer checked against the OpenAPI, with each provider_name as one of its closed list (docs/conformance.md). */
const conforms = (body: any) => violations(answerValidator('get', '/models/{author}/{slug}/endpoints'), { data: { ...body.data, endpoints: body.data.endpoints.map((e: object) => ({ ...e, provider_name: 'OpenAI' })) } });

describe("a gateway's upstream model", () => {
  it('lists one endpoint per provider that serves it, with that provider’s prices and limit', async () => {
    const r = await get('/v1/models/test/m/endpoints');
    expect(r.status).toBe(200);
    expect(conforms(r.body)).toBe('');
    expect(r.body.data.id).toBe('test/m');
    expect(r.body.data.endpoints.map((e: any) => [e.provider_name, e.name, e.pricing, e.max_completion_tokens, e.model_id])).toEqual([
      ['alpha', 'alpha: test/m', { prompt: '0.000002', completion: '0.000008' }, 4096, 'test/m'],
      ['beta', 'beta: test/m', { prompt: '0', completion: '0' }, null, 'test/m'],
    ]);
    const listed = (await get('/v1/model/test/m')).body.data;
    expect(r.body.data.endpoints[0].context_length).toBe(listed.context_length);
  });

  it('of one provider, and an embedding model, have theirs; an unknown model is 404; the local ones stay', async () => {
    expect((await get('/v1/models/test/solo/endpoints')).body.data.endpoints.map((e: any) => e.provider_name)).toEqual(['beta']);
    const vec = await get('/v1/models/test/vec/endpoints');
    expect(conforms(vec.body)).toBe('');
    expect(vec.body.data.architecture.output_modalities).toEqual(['embeddings']);
    expect((await get('/v1/models/test/nope/endpoints')).status).toBe(404);
    expect((await get('/v1/models/local/echo/endpoints')).body.data.endpoints.map((e: any) => e.provider_name)).toEqual(['local-alpha', 'local-beta']);
  });
});
