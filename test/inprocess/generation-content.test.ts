import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterClient } from '../../src/client/index.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// The OpenAPI's generation content and feedback, ZDR endpoints and analytics meta, which the emulator
// did not serve (404 before): each through the official @openrouter/sdk (it validates the answer's
// shape against the OpenAPI's) and through src/client where it covers the resource.
let t: CliEnv;
let sdk: (key: string) => import('@openrouter/sdk').OpenRouter;
let admin: RouterClient;

beforeAll(async () => {
  t = await startCliEnv();
  const { OpenRouter } = await import('@openrouter/sdk');
  sdk = (key) => new OpenRouter({ apiKey: key, serverURL: `${t.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
  admin = new RouterClient({ apiKey: t.managementKey, apiRoot: t.apiRoot, maxRetries: 0 });
});
afterAll(async () => {
  await admin.close();
  await t.close();
});

const call = async (key: string, path: string, body?: unknown) => {
  const res = await fetch(`${t.apiRoot}/v1${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const chat = async (content: string, stream = false) => {
  const res = await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/echo', stream, messages: [{ role: 'user', content }] }) });
  expect(res.status).toBe(200);
  const text = await res.text();
  return stream ? /"id":"(gen-[^"]+)"/.exec(text)![1]! : (JSON.parse(text) as { id: string }).id;
};

describe('GET /v1/generation/content', () => {
  it("gives a chat's messages and answer, through the SDK and src/client; a management key's only", async () => {
    const id = await chat('what is kept?');
    const got = await sdk(t.managementKey).generations.listGenerationContent({ id });
    expect(got.data).toEqual({ input: { messages: [{ role: 'user', content: 'what is kept?' }] }, output: { completion: 'what is kept?', reasoning: null }, error: null });
    expect(await admin.generations.content(id)).toEqual(got.data);
    const streamed = await chat('streamed too', true);
    expect((await admin.generations.content(streamed)).output.completion).toBe('streamed too');
    expect((await call(t.apiKey, `/generation/content?id=${id}`)).status).toBe(403);
    expect((await call(t.managementKey, '/generation/content?id=gen-none')).status).toBe(404);
  });

  it("a Responses generation's text input is its prompt", async () => {
    const res = await fetch(`${t.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/echo', input: 'say it' }) });
    const { id } = (await res.json()) as { id: string };
    expect((await admin.generations.content(id))).toMatchObject({ input: { prompt: 'say it' }, output: { completion: 'say it' }, error: null });
  });

  it("a Responses generation's reasoning is kept as a chat's is, whole and streamed", async () => {
    for (const stream of [false, true]) {
      const res = await fetch(`${t.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/thinker', input: 'why', stream }) });
      const answer = stream ? ((await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((e) => e.type === 'response.completed').response) : ((await res.json()) as any);
      const summary = answer.output.find((i: { type: string }) => i.type === 'reasoning').summary[0].text;
      expect(summary).toBeTruthy();
      // Before: reasoning null, though the answer reasoned (a chat's reasoning was kept).
      expect((await admin.generations.content(answer.id)).output).toEqual({ completion: answer.output_text, reasoning: summary });
    }
  });

  it("another workspace's generation is not found", async () => {
    const id = await chat('mine');
    const other = t.emu.store.createWorkspace('content-other', 1);
    expect((await call(other.managementKey, `/generation/content?id=${id}`)).status).toBe(404);
  });
});

describe('POST /v1/generation/feedback', () => {
  it('takes feedback on a generation of the workspace; refuses a bad category, an unknown id, a standard key', async () => {
    const id = await chat('feedback please');
    expect(await sdk(t.managementKey).generations.submitFeedback({ submitGenerationFeedbackRequest: { generationId: id, category: 'incorrect_response', comment: 'repeated itself' } })).toEqual({ data: { success: true } });
    await admin.generations.feedback({ generation_id: id, category: 'latency' });
    expect((await call(t.managementKey, '/generation/feedback', { generation_id: id, category: 'rude' })).status).toBe(400);
    expect((await call(t.managementKey, '/generation/feedback', { generation_id: id, category: 'other', comment: 'x'.repeat(1001) })).status).toBe(400);
    expect((await call(t.managementKey, '/generation/feedback', { generation_id: 'gen-none', category: 'other' })).status).toBe(404);
    expect((await call(t.apiKey, '/generation/feedback', { generation_id: id, category: 'other' })).status).toBe(403);
  });
});

describe('GET /v1/endpoints/zdr and /v1/analytics/meta', () => {
  it("lists every model's endpoints in the PublicEndpoint shape", async () => {
    const listed = (await sdk(t.apiKey).endpoints.listZdrEndpoints()).data;
    const echo = (await sdk(t.apiKey).endpoints.list({ author: 'local', slug: 'echo' })).data.endpoints;
    expect(listed.filter((e) => e.modelId === 'local/echo').map((e) => e.providerName)).toEqual(echo.map((e) => e.providerName));
    expect(new Set(listed.map((e) => e.modelId)).size).toBe((await call(t.apiKey, '/models?output_modalities=all')).body.data.length);
  });

  it('says the metrics, dimensions, operators and granularities; a management key only', async () => {
    const meta = (await sdk(t.managementKey).analytics.getAnalyticsMeta()).data;
    expect(meta.metrics.map((m) => m.name)).toContain('request_count');
    expect(meta.granularities.map((g) => g.name)).toEqual(['minute', 'hour', 'day', 'week', 'month']);
    expect(meta.operators.find((o) => o.name === 'in')?.valueType).toBe('array');
    expect((await call(t.apiKey, '/analytics/meta')).status).toBe(403);
  });
});

describe('what generation content keeps', () => {
  it('at most about 16 MiB: large requests push the oldest out, not 1,000 of them held', async () => {
    const small = await chat('kept while room is left');
    const big = async () => {
      const res = await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/lorem', max_tokens: 1, messages: [{ role: 'user', content: 'x'.repeat(9 * 1024 * 1024) }] }) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }).id;
    };
    const first = await big();
    expect((await call(t.managementKey, `/generation/content?id=${small}`)).status).toBe(200);
    const second = await big();
    // Before: all three kept (the cap was 1,000 of any size: 1,000 bodies of 32 MiB held in memory).
    expect((await call(t.managementKey, `/generation/content?id=${small}`)).status).toBe(404);
    expect((await call(t.managementKey, `/generation/content?id=${first}`)).status).toBe(404);
    const kept = await call(t.managementKey, `/generation/content?id=${second}`);
    expect(kept.status).toBe(200);
    expect(kept.body.data.input.messages[0].content).toHaveLength(9 * 1024 * 1024);
  });

  it('one request larger than all it may keep is not kept, and pushes none of the others out', async () => {
    const small = await chat('still kept after a huge one');
    const res = await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/lorem', max_tokens: 1, messages: [{ role: 'user', content: 'x'.repeat(17 * 1024 * 1024) }] }) });
    expect(res.status).toBe(200);
    const huge = ((await res.json()) as { id: string }).id;
    expect((await call(t.managementKey, `/generation/content?id=${huge}`)).status).toBe(404);
    // Before: 404 too (every content was pushed out to make room, then the huge one as well).
    const kept = await call(t.managementKey, `/generation/content?id=${small}`);
    expect(kept.status).toBe(200);
    expect(kept.body.data.input.messages).toEqual([{ role: 'user', content: 'still kept after a huge one' }]);
  });
});
