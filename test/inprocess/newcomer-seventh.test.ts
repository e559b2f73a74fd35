import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator } from '../../src/emulator/server.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { deadPort } from '../support/upstreams.js';

// Issue 46, round 7: clients we did not write (the official `openai` and `@openrouter/sdk`
// packages) against `router serve`, and what a seventh newcomer pass, from the tarball, found.
let t: CliEnv;
let openai: OpenAI;
type Sdk = InstanceType<(typeof import('@openrouter/sdk'))['OpenRouter']>;
let managed: Sdk;

beforeAll(async () => {
  t = await startCliEnv();
  openai = new OpenAI({ baseURL: `${t.apiRoot}/v1`, apiKey: t.apiKey, maxRetries: 0 });
  const { OpenRouter } = await import('@openrouter/sdk');
  managed = new OpenRouter({ apiKey: t.managementKey, serverURL: `${t.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
});
afterAll(() => t?.close());

describe('the openai package', () => {
  it("streams a reasoning model's Responses answer through its stream helper: summary and text", async () => {
    const stream = openai.responses.stream({ model: 'local/thinker', input: 'think' });
    const kinds: string[] = [];
    stream.on('event', (e) => kinds.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    const reasoning = final.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'The question is about "think". I list what I know, weigh it, and answer briefly.' }]);
    expect(final.output_text).toBe('Having thought it over: think');
    const part = kinds.filter((k) => k.startsWith('response.reasoning_summary_part.'));
    expect(part).toEqual(['response.reasoning_summary_part.added', 'response.reasoning_summary_part.done']);
  });
});

describe('the openai package: embeddings of token ids', () => {
  it('counts a token array as its ids, not as the characters of its JSON', async () => {
    const one = await openai.embeddings.create({ model: 'local/embed', input: [101, 2023, 2003] });
    expect(one.usage.prompt_tokens).toBe(3);
    const two = await openai.embeddings.create({ model: 'local/embed', input: [[101, 2023, 2003], [7, 8]] });
    expect([two.data.length, two.usage.prompt_tokens]).toEqual([2, 5]);
    const text = await openai.embeddings.create({ model: 'local/embed', input: 'hello' });
    // local/embed's price per prompt token (the model list's), the same for ids and text.
    expect((two.usage as unknown as { cost: number }).cost / 5).toBeCloseTo((text.usage as unknown as { cost: number }).cost / text.usage.prompt_tokens, 15);
  });
});

describe('@openrouter/sdk', () => {
  it("parses a reasoning model's Responses stream, summary part events included", async () => {
    const sdk = new (await import('@openrouter/sdk')).OpenRouter({ apiKey: t.apiKey, serverURL: `${t.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
    const stream = (await sdk.responses.send({ responsesRequest: { model: 'local/thinker', input: 'think', stream: true } })) as AsyncIterable<{ type: string; part?: { text?: string } }>;
    const parts: [string, string | undefined][] = [];
    for await (const e of stream) if (e.type.startsWith('response.reasoning_summary_part.')) parts.push([e.type, e.part?.text]);
    expect(parts).toEqual([
      ['response.reasoning_summary_part.added', ''],
      ['response.reasoning_summary_part.done', 'The question is about "think". I list what I know, weigh it, and answer briefly.'],
    ]);
  });

  it('creates a key: the answer parses (its external_user, which the SDK requires, is null)', async () => {
    const made = await managed.apiKeys.create({ requestBody: { name: 'seventh' } });
    expect(made.data.name).toBe('seventh');
    expect(made.data.externalUser).toBeNull();
    expect(made.key).toMatch(/^sk-rt-v1-/);
  });
});

describe('@openrouter/sdk: the model list beyond GET /v1/models', () => {
  it('lists the embedding models (each parsed, paged as the models are) and counts the models', async () => {
    const sdk = new (await import('@openrouter/sdk')).OpenRouter({ apiKey: t.apiKey, serverURL: `${t.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
    const ids: string[] = [];
    for await (const page of await sdk.embeddings.listModels()) ids.push(...page.result.data.map((m) => m.id));
    expect(ids).toEqual(['local/embed']);
    const paged = (await (await fetch(`${t.apiRoot}/v1/embeddings/models?limit=1`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as { data: unknown[]; links: { next: string | null }; total_count: number };
    expect([paged.data.length, paged.total_count, paged.links.next]).toEqual([1, 1, null]);
    const listed = (await openai.models.list()).data.length;
    expect((await sdk.models.count()).data.count).toBe(listed);
    const all = (await (await fetch(`${t.apiRoot}/v1/models?output_modalities=all`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as { total_count: number };
    expect((await sdk.models.count({ outputModalities: 'all' })).data.count).toBe(all.total_count);
    expect(all.total_count).toBeGreaterThan(listed);
  });
});

describe("a model's endpoints, where the list's links.details points", () => {
  it('answer for every listed model, parsed by @openrouter/sdk: one endpoint per provider; models.get too', async () => {
    const sdk = new (await import('@openrouter/sdk')).OpenRouter({ apiKey: t.apiKey, serverURL: `${t.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
    const echo = await sdk.endpoints.list({ author: 'local', slug: 'echo' });
    expect(echo.data.id).toBe('local/echo');
    expect(echo.data.endpoints.map((e) => [e.providerName, e.modelId, e.status])).toEqual([['local-alpha', 'local/echo', 0], ['local-beta', 'local/echo', 0]]);
    const down = await sdk.endpoints.list({ author: 'local', slug: 'unavailable' });
    expect(down.data.endpoints.map((e) => e.status)).toEqual([-1]);
    const listed = (await (await fetch(`${t.apiRoot}/v1/models?output_modalities=all`, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as { data: { id: string; links: { details: string } }[] };
    const origin = new URL(t.apiRoot).origin;
    for (const m of listed.data) {
      const res = await fetch(origin + m.links.details, { headers: { authorization: `Bearer ${t.apiKey}` } });
      expect([m.id, res.status]).toEqual([m.id, 200]);
      expect(((await res.json()) as { data: { id: string } }).data.id).toBe(m.id);
    }
    const none = await sdk.endpoints.list({ author: 'local', slug: 'nope' }).catch((e: unknown) => e);
    expect((none as { statusCode?: number }).statusCode).toBe(404);
    // One model's own entry (models.get), the same as the list's.
    const one = await sdk.models.get({ author: 'local', slug: 'tts' });
    expect([one.data.id, one.data.architecture.outputModalities]).toEqual(['local/tts', ['speech']]);
    const missing = await sdk.models.get({ author: 'local', slug: 'nope' }).catch((e: unknown) => e);
    expect((missing as { statusCode?: number }).statusCode).toBe(404);
  });
});

describe('a gateway whose upstreams cannot be reached', () => {
  it('names a host that does not resolve as not found, and a closed port as refused', async () => {
    // docs/gateway.md's file run as written, with no network: its openai entry's host was "connection refused (ENOTFOUND)".
    const yaml = `providers:
  - { name: gone, base_url: "http://no-such-host.invalid/v1", models: { test/a: x } }
  - { name: shut, base_url: "http://127.0.0.1:${await deadPort()}/v1", models: { test/a: x } }
`;
    const gateway = await startEmulator({ stateDir: join(t.dir, 'gw'), port: 0, gateway: { config: parseProviders(yaml, {}) } });
    try {
      const client = new OpenAI({ baseURL: `${gateway.apiRoot}/v1`, apiKey: gateway.store.firstKeys().apiKey, maxRetries: 0 });
      const failed = await client.chat.completions.create({ model: 'test/a', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(OpenAI.APIError);
      expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((failed as Error).message).toMatch(/gone: host not found \((ENOTFOUND|EAI_AGAIN)\).*shut: connection refused \(ECONNREFUSED\)/);
    } finally {
      await gateway.close();
    }
  });
});
