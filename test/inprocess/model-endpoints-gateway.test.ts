import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testGateway } from '../support/upstreams.js';

// A gateway with `local_models: false` serves no fake model: its model list, GET /v1/model/… and a
// chat leave them out. Before, GET /v1/models/local/echo/endpoints still answered 200 with
// local-alpha and local-beta endpoints of a model the gateway does not serve.
let gw: Awaited<ReturnType<typeof testGateway>>;

beforeAll(async () => {
  gw = await testGateway('providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { test/m: m } }\nlocal_models: false\n');
});

afterAll(() => gw?.close());

const get = (path: string) => gw.get<Record<string, unknown>>(path);

describe('a gateway without the fake models', () => {
  it('lists no endpoints of a fake model, as it lists no such model', async () => {
    expect((await get('/v1/model/local/echo')).status).toBe(404);
    const endpoints = await get('/v1/models/local/echo/endpoints');
    expect(endpoints.status).toBe(404);
    expect(endpoints.body).toMatchObject({ error: { code: 404 } });
  });

  it('still answers its own model by id', async () => {
    expect(await get('/v1/model/test/m')).toMatchObject({ status: 200, body: { data: { id: 'test/m' } } });
  });
});
