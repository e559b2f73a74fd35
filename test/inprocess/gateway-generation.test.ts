import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { deadPort, localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';

// An answer from an upstream provider through the gateway is kept like a fake model's: `GET
// /v1/generation?id=` and `router generation ID` find it, with the provider that answered, its
// tokens, the cost charged and the latency. The upstream is another emulator (the CliEnv's),
// spoken to only as an OpenAI-compatible server.
let t: CliEnv;
let gateway: Emulator;
let key: string;
let noId: LocalUpstream;
beforeAll(async () => {
  t = await startCliEnv();
  // OpenAI's embeddings answer carries no id: the gateway gives it one, so it can be asked for.
  noId = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', model: 'text-embedding-3-small', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 5, total_tokens: 5 } }));
  });
  const yaml = `
providers:
  - { name: dead, responses: true, base_url: "http://127.0.0.1:${await deadPort()}/v1", models: { test/chat: local/echo } }
  - name: up
    base_url: ${t.apiRoot}/v1
    api_key_env: ROUTER_API_KEY
    responses: true
    models: { test/chat: local/echo }
    embedding_models: { test/embed: local/embed }
    prices: { test/chat: { prompt: 0.001, completion: 0.002 }, test/embed: { prompt: 0.0001, completion: 0 } }
  - { name: noid, base_url: "${noId.baseUrl}", embedding_models: { test/embed-noid: text-embedding-3-small }, prices: { test/embed-noid: { prompt: 0.01, completion: 0 } } }
  - name: voice
    base_url: ${t.apiRoot}/v1
    api_key_env: UP_MANAGEMENT_KEY
    speech_models: { test/tts: local/tts }
    prices: { test/tts: { prompt: 0.001, completion: 0 } }
`;
  const config = parseProviders(yaml, { ...t.env, UP_MANAGEMENT_KEY: t.managementKey });
  gateway = await startEmulator({ stateDir: join(t.dir, 'gateway'), port: 0, gateway: { config } });
  key = gateway.store.firstKeys().apiKey;
});
afterAll(async () => {
  await gateway?.close();
  await noId?.close();
  await t?.close();
});

const post = async (path: string, body: unknown, k = key) => {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
};
const generation = async (id: string, k = key) => {
  const res = await fetch(`${gateway.apiRoot}/v1/generation?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${k}` } });
  return { status: res.status, body: (await res.json()) as any };
};
const dataEvents = (sse: string) => sse.split('\n\n').filter((e) => e.includes('data: ') && !e.includes('data: [DONE]')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)));
const priced = (u: { prompt_tokens: number; completion_tokens: number }) => Math.round((u.prompt_tokens * 0.001 + u.completion_tokens * 0.002) * 1e10) / 1e10;

describe('generations answered by an upstream through the gateway', () => {
  it('a chat, not streamed: the provider that answered (past a dead one), tokens, the cost charged, latency, in the OpenAPI shape', async () => {
    const res = await post('/v1/chat/completions', { model: 'test/chat', user: 'u-7', messages: [{ role: 'user', content: 'kept through the gateway' }] });
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.text);
    const got = await generation(answer.id);
    expect(got.status).toBe(200);
    expect(violations(answerValidator('get', '/generation'), got.body)).toBe('');
    expect(got.body.data).toMatchObject({
      id: answer.id,
      upstream_id: expect.not.stringMatching(answer.id),
      model: 'test/chat',
      provider_name: 'up',
      total_cost: priced(answer.usage),
      native_tokens_prompt: answer.usage.prompt_tokens,
      native_tokens_completion: answer.usage.completion_tokens,
      streamed: false,
      finish_reason: 'stop',
      external_user: 'u-7',
      api_type: 'completions',
    });
    expect(got.body.data.total_cost).toBe(answer.usage.cost);
    expect(got.body.data.latency).toBeGreaterThanOrEqual(0);
    // The upstream kept its own record under its own model and price; the gateway's is the caller's.
    const upstreamKept = await fetch(`${t.apiRoot}/v1/generation?id=${got.body.data.upstream_id}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(((await upstreamKept.json()) as any).data.model).toBe('local/echo');
  });

  it('a chat streamed: kept once its stream ended whole, with the usage of its last chunk', async () => {
    const res = await post('/v1/chat/completions', { model: 'test/chat', stream: true, session_id: 's-1', messages: [{ role: 'user', content: 'streamed and kept' }] });
    const chunks = dataEvents(res.text);
    const usage = chunks.find((c) => c.usage)!.usage;
    const got = await generation(chunks[0].id);
    expect(got.body.data).toMatchObject({ id: chunks[0].id, provider_name: 'up', model: 'test/chat', streamed: true, total_cost: usage.cost, native_tokens_completion: usage.completion_tokens, finish_reason: 'stop', session_id: 's-1' });
    expect(usage.cost).toBe(priced(usage));
  });

  it('Responses, whole and streamed, are kept too; another workspace gets 404', async () => {
    const whole = JSON.parse((await post('/v1/responses', { model: 'test/chat', input: 'a response kept' })).text);
    expect((await generation(whole.id)).body.data).toMatchObject({ id: whole.id, provider_name: 'up', streamed: false, native_tokens_prompt: whole.usage.input_tokens, total_cost: whole.usage.cost });
    const streamed = dataEvents((await post('/v1/responses', { model: 'test/chat', stream: true, input: 'a stream kept' })).text);
    const done = streamed.find((e) => e.type === 'response.completed').response;
    expect((await generation(done.id)).body.data).toMatchObject({ id: done.id, streamed: true, native_tokens_completion: done.usage.output_tokens, total_cost: done.usage.cost, finish_reason: 'stop' });
    const other = gateway.store.createWorkspace(undefined, 1);
    expect((await generation(whole.id, other.apiKey)).status).toBe(404);
  });

  it('router generation ID against the gateway prints the upstream provider, tokens and cost', async () => {
    const answer = JSON.parse((await post('/v1/chat/completions', { model: 'test/chat', messages: [{ role: 'user', content: 'one two three' }] })).text);
    const r = await t.run(['generation', answer.id], { env: { ROUTER_API_ROOT: gateway.apiRoot, ROUTER_API_KEY: key } });
    expect(r.code, r.stderr).toBe(0);
    const rows = Object.fromEntries(r.stdout.trim().split('\n').map((l) => l.split('\t')));
    expect(rows).toMatchObject({ id: answer.id, model: 'test/chat', provider: 'up', finish: 'stop', streamed: 'no' });
    expect(rows.tokens).toBe(`prompt ${answer.usage.prompt_tokens}, completion ${answer.usage.completion_tokens}`);
  });

  it('embeddings are kept: the provider that answered, tokens, cost, latency, api_type embeddings', async () => {
    const res = await post('/v1/embeddings', { model: 'test/embed', input: ['kept embeddings', 'two'], user: 'u-emb' });
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.text);
    const got = await generation(answer.id);
    expect(got.status).toBe(200);
    expect(violations(answerValidator('get', '/generation'), got.body)).toBe('');
    expect(got.body.data).toMatchObject({ id: answer.id, upstream_id: expect.not.stringMatching(answer.id), model: 'test/embed', provider_name: 'up', api_type: 'embeddings', native_tokens_prompt: answer.usage.prompt_tokens, native_tokens_completion: 0, total_cost: answer.usage.cost, streamed: false, external_user: 'u-emb' });
    expect(answer.usage.cost).toBe(Math.round(answer.usage.prompt_tokens * 0.0001 * 1e10) / 1e10);
    expect(got.body.data.latency).toBeGreaterThanOrEqual(0);
  });

  it('embeddings are kept with their session id, from the body or the x-session-id header, as chat is (never sent upstream)', async () => {
    // Before: a gateway embedding's generation said session_id null whatever the request carried.
    const inBody = JSON.parse((await post('/v1/embeddings', { model: 'test/embed', input: 'grouped', session_id: 's-emb' })).text);
    expect((await generation(inBody.id)).body.data).toMatchObject({ api_type: 'embeddings', provider_name: 'up', session_id: 's-emb' });
    expect(t.requests().filter((q) => q.path.endsWith('/embeddings')).at(-1)!.body).not.toHaveProperty('session_id');
    for (const model of ['test/embed', 'local/embed']) {
      const res = await fetch(`${gateway.apiRoot}/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-session-id': `h-${model}` }, body: JSON.stringify({ model, input: 'grouped by header' }) });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { id: string };
      expect((await generation(answer.id)).body.data).toMatchObject({ model, api_type: 'embeddings', session_id: `h-${model}` });
    }
  });

  it("an upstream's embeddings answer without an id gets the gateway's, and is kept under it", async () => {
    const res = await post('/v1/embeddings', { model: 'test/embed-noid', input: 'no id upstream' });
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.text);
    expect(answer.id).toMatch(/^emb-\d+-[0-9a-f]+$/);
    const got = await generation(answer.id);
    expect(got.body.data).toMatchObject({ id: answer.id, upstream_id: null, provider_name: 'noid', api_type: 'embeddings', native_tokens_prompt: 5, total_cost: 0.05 });
  });

  it('speech is kept under the id of its x-generation-id header: provider, cost per character, api_type tts', async () => {
    const input = 'the tide keeps the record';
    const res = await post('/v1/audio/speech', { model: 'test/tts', voice: 'alloy', input, session_id: 's-tts' }, gateway.store.firstKeys().managementKey);
    expect(res.status).toBe(200);
    expect(res.text.length).toBeGreaterThan(0);
    const id = res.headers.get('x-generation-id')!;
    expect(id).toMatch(/^gen-/);
    const got = await generation(id, gateway.store.firstKeys().managementKey);
    expect(got.status).toBe(200);
    expect(violations(answerValidator('get', '/generation'), got.body)).toBe('');
    expect(got.body.data).toMatchObject({ id, upstream_id: null, model: 'test/tts', provider_name: 'voice', api_type: 'tts', total_cost: input.length * 0.001, session_id: 's-tts' });
  });

  it("the fake models' speech is kept the same way", async () => {
    const res = await post('/v1/audio/speech', { model: 'local/tts', voice: 'sage', input: 'four words of speech' }, gateway.store.firstKeys().managementKey);
    expect(res.status).toBe(200);
    const got = await generation(res.headers.get('x-generation-id')!, gateway.store.firstKeys().managementKey);
    expect(got.body.data).toMatchObject({ model: 'local/tts', provider_name: 'local-alpha', api_type: 'tts', total_cost: Math.round('four words of speech'.length * 1.5e-5 * 1e10) / 1e10 });
  });
});
