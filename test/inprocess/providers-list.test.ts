import { afterAll, expect, it } from 'vitest';
import { answersHi, localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';

// `GET /v1/providers` (the OpenAPI's listProviders, the SDKs' providers.list()) was a 404: it lists
// the providers that serve a listed model, the fake ones unless a gateway turned them off, then the
// providers file's, in the OpenAPI's shape.
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

async function providersOf(localModels: boolean): Promise<{ status: number; body: any }> {
  const up: LocalUpstream = await localUpstream(answersHi);
  closers.push(up.close);
  const gw = await testGateway(`providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { test/m: m } }\nlocal_models: ${localModels}\n`, 'providers');
  closers.push(gw.close);
  return gw.get('/v1/providers');
}

it('a gateway lists the fake providers and its own', async () => {
  const got = await providersOf(true);
  expect(got.status).toBe(200);
  expect(got.body.data.map((p: { slug: string }) => p.slug)).toEqual(['local-alpha', 'local-beta', 'up']);
  expect(got.body.data[2]).toEqual({ name: 'up', slug: 'up', privacy_policy_url: null, terms_of_service_url: null, status_page_url: null, headquarters: null, datacenters: null });
});

it('with local_models: false, only its own', async () => {
  expect((await providersOf(false)).body.data.map((p: { slug: string }) => p.slug)).toEqual(['up']);
});
