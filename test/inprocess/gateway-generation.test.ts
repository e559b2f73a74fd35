import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { deadPort } from '../support/upstreams.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';

// An answer from an upstream provider through the gateway is kept like a fake model's: `GET
// /v1/generation?id=` and `router generation ID` find it, with the provider that answered, its
// tokens, the cost charged and the latency. The upstream is another emulator (the CliEnv's),
// spoken to only as an OpenAI-compatible server.
let t: CliEnv;
let gateway: Emulator;
let key: string;
beforeAll(async () => {
  t = await startCliEnv();
  const yaml = `
providers:
  - { name: dead, responses: true, base_url: "http://127.0.0.1:${await deadPort()}/v1", models: { test/chat: local/echo } }
  - name: up
    base_url: ${t.apiRoot}/v1
    api_key_env: ROUTER_API_KEY
    responses: true
    models: { test/chat: local/echo }
    prices: { test/chat: { prompt: 0.001, completion: 0.002 } }
`;
  gateway = await startEmulator({ stateDir: join(t.dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, t.env) } });
  key = gateway.store.firstKeys().apiKey;
});
afterAll(async () => {
  await gateway?.close();
  await t?.close();
});

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${gateway.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
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
      upstream_id: answer.id,
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
    const upstreamKept = await fetch(`${t.apiRoot}/v1/generation?id=${answer.id}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
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
});
