import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A generation's `service_tier` is the tier "the upstream provider reported running this request on".
// Only a batch's was recorded: every other generation, a fake model's or one a gateway relayed, said
// null though its answer reported a tier (chat's and Responses' `service_tier`).
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let flexStream: LocalUpstream;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-service-tier-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  // An OpenAI-like stream: every chunk names its tier.
  flexStream = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: object, finish: string | null, usage?: object) => `data: ${JSON.stringify({ id: 'chatcmpl-flex', object: 'chat.completion.chunk', created: 1, model: 'm', service_tier: 'flex', choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
    res.end(`${chunk({ role: 'assistant', content: 'hi' }, null)}${chunk({}, 'stop')}${chunk({}, null, { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 })}data: [DONE]\n\n`);
  });
  const yaml = `providers:
  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, responses: true, models: { test/echo: local/echo } }
  - { name: flex, base_url: "${flexStream.baseUrl}", models: { test/flex: m } }
`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await flexStream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (e: Emulator, path: string, body: unknown) =>
  fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
async function tierOf(e: Emulator, id: string): Promise<unknown> {
  const res = await fetch(`${e.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}` } });
  const got = (await res.json()) as any;
  expect(res.status, JSON.stringify(got)).toBe(200);
  return got.data.service_tier;
}
const events = (raw: string) => raw.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));

it('a fake model’s chat and Responses generations record the tier their answers report; none asked is null', async () => {
  const chat = (await (await post(upstream, '/v1/chat/completions', { model: 'local/echo', service_tier: 'flex', messages: [{ role: 'user', content: 'hi' }] })).json()) as any;
  expect(chat.service_tier).toBe('flex');
  expect(await tierOf(upstream, chat.id)).toBe('flex');
  const plain = (await (await post(upstream, '/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] })).json()) as any;
  expect(await tierOf(upstream, plain.id)).toBeNull();
  const resp = (await (await post(upstream, '/v1/responses', { model: 'local/echo', service_tier: 'priority', input: 'hi' })).json()) as any;
  expect(resp.service_tier).toBe('priority');
  expect(await tierOf(upstream, resp.id)).toBe('priority');
});

it('a gateway’s generation records the tier its upstream’s answer reports: chat and Responses, whole and streamed', async () => {
  const chat = (await (await post(gateway, '/v1/chat/completions', { model: 'test/echo', service_tier: 'flex', messages: [{ role: 'user', content: 'hi' }] })).json()) as any;
  expect(chat.service_tier).toBe('flex');
  expect(await tierOf(gateway, chat.id)).toBe('flex');
  const chunks = events(await (await post(gateway, '/v1/chat/completions', { model: 'test/flex', stream: true, messages: [{ role: 'user', content: 'hi' }] })).text());
  expect(chunks[0].service_tier).toBe('flex');
  expect(await tierOf(gateway, chunks[0].id)).toBe('flex');
  const resp = (await (await post(gateway, '/v1/responses', { model: 'test/echo', service_tier: 'priority', input: 'hi' })).json()) as any;
  expect(resp.service_tier).toBe('priority');
  expect(await tierOf(gateway, resp.id)).toBe('priority');
  const done = events(await (await post(gateway, '/v1/responses', { model: 'test/echo', service_tier: 'flex', stream: true, input: 'hi' })).text()).find((e) => e.type === 'response.completed');
  expect(done.response.service_tier).toBe('flex');
  expect(await tierOf(gateway, done.response.id)).toBe('flex');
});
