import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { failing, type LocalUpstream } from '../support/upstreams.js';
import type { OpenResponsesResult, StreamEvents } from '@openrouter/sdk/models';
import type { EventStream } from '@openrouter/sdk/lib/event-streams.js';

// Responses of an upstream model through a gateway, as the official packages see them over HTTP.
// api.md: routing metadata "is surfaced on chat and Responses responses only when the opt-in header is
// set". Through a gateway, Responses of an upstream model carried none (a fake model's did), whole or
// streamed: seen by the official packages, `router_metadata` read through `openai` and the SDK's
// `openrouterMetadata` (`X-OpenRouter-Metadata`), each over real HTTP.
let dir: string;
let upstream: Emulator;
let down: LocalUpstream;
let gateway: Emulator;
let client: OpenAI;
type Sdk = InstanceType<(typeof import('@openrouter/sdk'))['OpenRouter']>;
let sdk: Sdk;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-resp-meta-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  down = await failing(503);
  const yaml = `
providers:
  - { name: down, base_url: "${down.baseUrl}", responses: true, models: { test/fallback: m } }
  - name: up
    base_url: ${upstream.apiRoot}/v1
    api_key_env: UP_KEY
    responses: true
    models: { test/echo: local/echo, test/fallback: local/echo }
    prices: { test/echo: { prompt: 0.001, completion: 0.002 }, test/fallback: { prompt: 0.001, completion: 0.002 } }
`;
  const config = parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
  const key = gateway.store.firstKeys().apiKey;
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0 });
  const { OpenRouter } = await import('@openrouter/sdk');
  sdk = new OpenRouter({ apiKey: key, serverURL: `${gateway.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await down?.close();
  rmSync(dir, { recursive: true, force: true });
});

const optIn = { headers: { 'x-router-metadata': 'enabled' } };
type Meta = { attempt: number; strategy: string; summary: string; requested: string; endpoints: { available: { provider: string; selected: boolean }[] } };
const metaOf = (r: unknown) => (r as { router_metadata?: Meta }).router_metadata;

describe('Responses through a gateway, routing metadata opted in', () => {
  it('a whole answer carries router_metadata naming the provider that answered', async () => {
    const r = await client.responses.create({ model: 'test/echo', input: 'hi there' }, optIn);
    expect(r.output_text).toBe('hi there');
    const meta = metaOf(r)!;
    expect(meta).toMatchObject({ attempt: 1, strategy: 'direct', requested: 'test/echo' });
    expect(meta.summary).toBe('responses: test/echo -> test/echo via up (attempt 1)');
    expect(meta.endpoints.available).toEqual([{ model: 'test/echo', provider: 'up', selected: true }]);
    // Not asked for, not there.
    expect(metaOf(await client.responses.create({ model: 'test/echo', input: 'hi' }))).toBeUndefined();
  });

  it('a stream carries it on each event with a response, and the final response has it', async () => {
    const stream = client.responses.stream({ model: 'test/echo', input: 'a b c' }, optIn);
    const withMeta: string[] = [];
    stream.on('event', (e) => {
      if ('response' in e && metaOf(e.response)) withMeta.push(e.type);
    });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('a b c');
    expect(withMeta).toEqual(['response.created', 'response.in_progress', 'response.completed']);
  });

  it('after a provider that failed: strategy fallback, two attempts, the one passed over said', async () => {
    const r = await client.responses.create({ model: 'test/fallback', input: 'again' }, optIn);
    const meta = metaOf(r)!;
    expect(meta).toMatchObject({ attempt: 2, strategy: 'fallback' });
    expect(meta.summary).toMatch(/^responses: test\/fallback -> test\/fallback via up \(attempt 2\); failed: down /);
  });

  it('@openrouter/sdk parses openrouter_metadata (X-OpenRouter-Metadata), whole and streamed', async () => {
    const headers = { headers: { 'X-OpenRouter-Metadata': 'enabled' } };
    const whole = (await sdk.beta.responses.send({ responsesRequest: { model: 'test/echo', input: 'x y' } }, headers)) as OpenResponsesResult;
    expect(whole.openrouterMetadata).toMatchObject({ attempt: 1, requested: 'test/echo', attempts: [{ provider: 'up', model: 'test/echo', status: 200 }] });
    const stream = (await sdk.beta.responses.send({ responsesRequest: { model: 'test/echo', input: 'x y', stream: true } }, headers)) as EventStream<StreamEvents>;
    const types: string[] = [];
    for await (const e of stream) if ('response' in e && (e.response as OpenResponsesResult).openrouterMetadata?.summary?.startsWith('responses: test/echo')) types.push(e.type);
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.completed']);
  });
});

describe("Responses through a gateway: the caller's end user", () => {
  it('is echoed as the caller sent it, whole and streamed, not as the hashed identity the upstream was sent', async () => {
    const asked = { model: 'test/echo', input: 'who', user: 'alice@example.com', safety_identifier: 'alice-42' };
    const whole = await client.responses.create(asked);
    expect([whole.user, whole.safety_identifier]).toEqual(['alice@example.com', 'alice-42']);
    const streamed = await client.responses.stream(asked).finalResponse();
    expect([streamed.user, streamed.safety_identifier]).toEqual(['alice@example.com', 'alice-42']);
    // The upstream was sent (and kept) the hashed identity, never the raw one.
    const upstreamId = gateway.store.generation(whole.id)!.data.upstream_id as string;
    expect(upstream.store.generation(upstreamId)).toBeDefined();
    expect(JSON.stringify(upstream.store.generation(upstreamId)!.data)).not.toContain('alice');
  });
});
