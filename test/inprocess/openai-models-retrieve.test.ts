import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

// The openai SDK's `models.retrieve(id)` asks `GET /models/{id}` with the id's slash encoded
// (`/models/local%2Fecho`): a 404 (the OpenAPI has only `/model/{author}/{slug}`). It answers the
// model list's entry, with OpenAI's `object` and `owned_by`, also at the path with the slash as it is.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-models-retrieve-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/echo: local/echo }, prices: { test/echo: { prompt: 0.001, completion: 0.002 } } }\nlocal_models: false\n`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sdk = (e: Emulator) => new OpenAI({ apiKey: e.store.firstKeys().apiKey, baseURL: `${e.apiRoot}/v1`, maxRetries: 0 });
const get = async (e: Emulator, path: string) => {
  const res = await fetch(`${e.apiRoot}${path}`, { headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}` } });
  return { status: res.status, body: (await res.json()) as any };
};

it('answers the openai SDK’s models.retrieve with the model list’s entry, as an OpenAI model object too', async () => {
  // Before: NotFoundError 404 "No route for GET /api/v1/models/local%2Fecho".
  const model = await sdk(upstream).models.retrieve('local/echo');
  const listed = (await get(upstream, '/v1/models')).body.data.find((m: any) => m.id === 'local/echo');
  expect(model).toEqual({ ...listed, object: 'model', owned_by: 'local' });
  expect(model.created).toBe(listed.created);
  // The slash as it is: the same answer.
  expect((await get(upstream, '/v1/models/local/echo')).body).toEqual(model);
});

it('on a gateway: its own models, not the fake ones it turned off; an unknown id is the SDK’s NotFoundError', async () => {
  const client = sdk(gateway);
  expect(await client.models.retrieve('test/echo')).toMatchObject({ id: 'test/echo', object: 'model', owned_by: 'test' });
  await expect(client.models.retrieve('local/echo')).rejects.toMatchObject({ status: 404, message: expect.stringContaining('No model local/echo in the model list') });
  await expect(client.models.retrieve('nobody')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
});

it('leaves /v1/models/user, /v1/models/count and a model’s endpoints to their own routes', async () => {
  expect((await get(upstream, '/v1/models/count')).body.data).toEqual({ count: expect.any(Number) });
  expect(Array.isArray((await get(upstream, '/v1/models/user')).body.data)).toBe(true);
  expect((await get(upstream, '/v1/models/local/echo/endpoints')).body.data.endpoints.length).toBeGreaterThan(0);
});
