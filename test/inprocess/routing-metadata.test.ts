import { describe, expect, it } from 'vitest';
import { post, sharedCliEnv, type CliEnv } from '../support/cli-env.js';
import { fixtureRuns } from '../support/fixture-server.js';
import { answerValidator, CHAT_ANSWERS, exampleOf, RESPONSES_ANSWERS, schemaValidator, violations } from '../conformance/openapi-fixtures.js';
import { RouterClient } from '../../src/client/index.js';

// Routing metadata under both names (issue 42): api.md's legacy header answers `router_metadata`,
// the deployed service's `X-OpenRouter-Metadata` answers `openrouter_metadata` in the OpenAPI's shape.
let t: CliEnv;
sharedCliEnv((e) => (t = e));

const fallback = { model: 'local/unavailable', models: ['local/echo'], messages: [{ role: 'user', content: 'hey' }] };
const OPENROUTER = { 'x-openrouter-metadata': 'enabled' };
/** The `data:` events of an event stream, parsed (the `[DONE]` left out). */
const events = (text: string) => text.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)));

describe('the emulator answers the field of the header it was asked with', () => {
  it('X-OpenRouter-Metadata: openrouter_metadata as the OpenAPI says (attempts included), no router_metadata', async () => {
    const r = await post(t, '/v1/chat/completions', { ...fallback, plugins: [{ id: 'web' }] }, OPENROUTER);
    expect(r.status).toBe(200);
    expect(r.json.router_metadata).toBeUndefined();
    expect(violations(answerValidator('post', '/chat/completions'), r.json)).toBe('');
    expect(violations(schemaValidator('OpenRouterMetadata'), r.json.openrouter_metadata)).toBe('');
    expect(r.json.openrouter_metadata).toMatchObject({
      attempt: 2,
      strategy: 'fallback',
      requested: 'local/unavailable',
      attempts: [{ model: 'local/unavailable', status: 502 }, { model: 'local/echo', provider: 'local-alpha', status: 200 }],
      pipeline: [{ type: 'plugin', name: 'web' }],
    });
  });

  it('the legacy header (and X-Router-Metadata): router_metadata as api.md says, no openrouter_metadata', async () => {
    for (const header of ['x-router-experimental-metadata', 'x-router-metadata']) {
      const r = await post(t, '/v1/chat/completions', fallback, { [header]: 'enabled' });
      expect(r.json.openrouter_metadata).toBeUndefined();
      expect(r.json.router_metadata).toMatchObject({ attempt: 2, requested: 'local/unavailable', generation_time: expect.any(Number) });
    }
    const none = await post(t, '/v1/chat/completions', fallback, { 'x-openrouter-metadata': 'disabled' });
    expect(none.json.openrouter_metadata).toBeUndefined();
  });

  it('streamed chat and Responses carry it too', async () => {
    const chunks = events((await post(t, '/v1/chat/completions', { ...fallback, stream: true }, OPENROUTER)).text);
    const withMeta = chunks.filter((c) => c.openrouter_metadata);
    expect(withMeta).toHaveLength(1);
    expect(violations(schemaValidator('ChatStreamChunk'), withMeta[0])).toBe('');
    const res = await post(t, '/v1/responses', { model: 'local/echo', input: 'hi' }, OPENROUTER);
    expect(res.json.openrouter_metadata).toMatchObject({ requested: 'local/echo', attempts: [{ status: 200 }] });
    const streamed = events((await post(t, '/v1/responses', { model: 'local/echo', input: 'hi', stream: true }, OPENROUTER)).text);
    expect(streamed.at(-1)).toMatchObject({ type: 'response.completed', response: { openrouter_metadata: { requested: 'local/echo' } } });
  });
});

describe('router --router-metadata', () => {
  it('sends both header names and shows the summary and the attempts, streamed or not', async () => {
    for (const stream of ['--no-stream', '--stream']) {
      t.clearRequests();
      const r = await t.run(['chat', '--model', 'local/unavailable', '--models', 'local/echo', '--router-metadata', stream, 'hey']);
      expect(r).toMatchObject({ code: 0, stdout: 'hey\n' });
      expect(r.stderr).toMatch(/^router: chat: local\/unavailable -> local\/echo via local-alpha \(attempt 2\); failed: local-beta \(local\/unavailable: unavailable\)$/m);
      expect(r.stderr).toMatch(/^router: attempts: local\/unavailable via local-beta \(502\), local\/echo via local-alpha \(200\)$/m);
      const { headers } = t.requests().find((q) => q.path === '/v1/chat/completions')!;
      expect(headers).toMatchObject({ 'x-router-experimental-metadata': 'enabled', 'x-openrouter-metadata': 'enabled' });
    }
    const responses = await t.run(['responses', '--model', 'local/echo', '--router-metadata', 'hi']);
    expect(responses.stderr).toMatch(/^router: responses: local\/echo -> local\/echo via \S+ \(attempt 1\)$/m);
  });

  it('without the flag: neither header is sent', async () => {
    await t.run(['chat', '--model', 'local/echo', 'hey']);
    const { headers } = t.requests().find((q) => q.path === '/v1/chat/completions')!;
    expect(headers['x-openrouter-metadata']).toBeUndefined();
    expect(headers['x-router-experimental-metadata']).toBeUndefined();
  });
});

describe('a service that answers only openrouter_metadata (as the deployed one does)', () => {
  const fixture = fixtureRuns();
  const meta = { ...exampleOf('OpenRouterMetadata'), attempts: [{ provider: 'Azure', model: 'openai/gpt-4o', status: 429 }, { provider: 'OpenAI', model: 'openai/gpt-4o', status: 200 }], pipeline: [exampleOf('PipelineStage')] };

  it('non-streamed chat and Responses: the summary, the attempts and the pipeline', async () => {
    const chat = { ...CHAT_ANSWERS.example(), openrouter_metadata: meta };
    expect(violations(answerValidator('post', '/chat/completions'), chat)).toBe('');
    const r = await fixture.against({ 'POST /api/v1/chat/completions': { body: chat } }, ['chat', '--no-stream', '--router-metadata', '--model', 'x/y', 'hi']);
    expect(r).toEqual({
      code: 0,
      stdout: 'The capital of France is Paris.\n',
      stderr: 'router: available=1, selected=OpenAI\nrouter: attempts: openai/gpt-4o via Azure (429), openai/gpt-4o via OpenAI (200)\nrouter: pipeline: guardrail content-filter: PII redacted via Presidio (EMAIL, PHONE)\n',
    });
    const resp = { ...RESPONSES_ANSWERS.example(), openrouter_metadata: meta };
    const rr = await fixture.against({ 'POST /api/v1/responses': { body: resp } }, ['responses', '--no-stream', '--router-metadata', '--model', 'x/y', 'hi']);
    expect(rr.code).toBe(0);
    expect(rr.stderr).toMatch(/^router: available=1, selected=OpenAI\nrouter: attempts: .*\nrouter: pipeline: guardrail content-filter/);
  });

  it('a streamed chat whose first chunk carries it', async () => {
    const first = { ...exampleOf('ChatStreamChunk'), openrouter_metadata: meta };
    const last = { ...exampleOf('ChatStreamChunk'), choices: [{ delta: {}, finish_reason: 'stop', index: 0 }] };
    const r = await fixture.against({ 'POST /api/v1/chat/completions': { events: [first, last], terminator: '[DONE]' } }, ['chat', '--router-metadata', '--model', 'x/y', 'hi']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^router: available=1, selected=OpenAI\nrouter: attempts: /);
  });
});

describe('usage comes in every stream (the OpenAPI: include_usage has no effect)', () => {
  it('a stream asked without usage still ends with it, and the client reads the text and the usage', async () => {
    const raw = events((await post(t, '/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'one two' }], stream: true })).text);
    expect(raw.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) } });
    const client = new RouterClient({ apiKey: t.apiKey, apiRoot: t.apiRoot, maxRetries: 0 });
    try {
      let text = '';
      let usage: unknown;
      for await (const c of await client.chat.stream({ model: 'local/echo', messages: [{ role: 'user', content: 'one two' }], stream_options: { include_usage: false } })) {
        text += c.choices[0]?.delta.content ?? '';
        usage ??= c.usage;
      }
      expect(text).toBe('one two');
      expect(usage).toMatchObject({ completion_tokens: expect.any(Number) });
    } finally {
      await client.close();
    }
  });
});
