import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { breaking, deadPort, failing, type LocalUpstream } from '../support/upstreams.js';
import { runCliInProcess } from '../support/cli-env.js';

// `POST /v1/messages` through a gateway (`router serve --providers`) whose providers speak only OpenAI's chat
// completions: the request translated to chat, the answer back, with chat's fallback, its stream breaks said as
// Anthropic's `error` event, its cassettes, and a `/v1/messages` batch made with `router batch create`.
let dir: string;
let upstream: Emulator;
let down: LocalUpstream;
let cut: LocalUpstream;
let gateway: Emulator;
let client: Anthropic;

const yaml = (upRoot: string) => `
providers:
  - { name: down, base_url: "${down.baseUrl}", models: { test/m: m } }
  - { name: up, base_url: "${upRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/lorem, test/tools: local/tools }, prices: { test/m: { prompt: 0.001, completion: 0.002 } } }
  - { name: cut, base_url: "${cut.baseUrl}", models: { test/cut: m } }
`;
const config = (upRoot: string) => parseProviders(yaml(upRoot), { UP_KEY: upstream.store.firstKeys().apiKey });
const sdk = (e: Emulator) => new Anthropic({ apiKey: e.store.firstKeys().apiKey, baseURL: e.apiRoot, maxRetries: 0 });
const ASK = { model: 'test/m', max_tokens: 60, provider: { order: ['down', 'up'] }, messages: [{ role: 'user' as const, content: 'write 10 words' }] };
/** The request with other provider preferences (OpenRouter's `provider`, which the SDK's types do not name). */
const withProvider = (provider?: object) => ({ ...ASK, provider });
const generation = async (e: Emulator, id: string) => {
  const res = await fetch(`${e.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}` } });
  return ((await res.json()) as { data: { provider_name: string; total_cost: number } }).data;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-messages-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  down = await failing(503);
  cut = await breaking(3);
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: config(upstream.apiRoot) } });
  client = sdk(gateway);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await down?.close();
  await cut?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /v1/messages through a gateway', () => {
  it('falls back past a provider that fails, whole and streamed; the generation names the one that answered', async () => {
    const whole = await client.messages.create(ASK);
    // The body the OpenAPI-compatible upstream got: chat completions, the messages format's fields translated.
    const sent = upstream.requestLog.filter((e) => e.path === '/v1/chat/completions').at(-1)!;
    expect(sent.body).toMatchObject({ model: 'local/lorem', max_tokens: 60, messages: [{ role: 'user', content: 'write 10 words' }] });
    const streamed = await client.messages.stream(ASK).finalMessage();
    expect(streamed.content).toEqual(whole.content);
    expect(whole.stop_reason).toBe('end_turn');
    for (const m of [whole, streamed]) {
      const g = await generation(gateway, m.id);
      expect(g.provider_name).toBe('up');
      expect(g.total_cost).toBeCloseTo(m.usage.input_tokens * 0.001 + m.usage.output_tokens * 0.002, 12);
    }
  });

  it('a stream broken after content ends with an `error` event, which the SDK throws', async () => {
    const stream = client.messages.stream({ ...withProvider(), model: 'test/cut' });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const failed = await stream.finalMessage().catch((e: unknown) => e);
    expect(texts.join('')).toContain('token0');
    expect(failed).toBeInstanceOf(Anthropic.APIError);
    expect(String((failed as Error).message)).toContain('mid-stream');
  });

  it('every provider failing is a 502 in the messages error shape', async () => {
    const refused = await client.messages.create(withProvider({ only: ['down'] })).catch((e: unknown) => e);
    expect((refused as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect((refused as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('down') } });
  });

  it('cassettes: recorded through one gateway, replayed by another with its upstream gone', async () => {
    const tapes = join(dir, 'tapes');
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: config(upstream.apiRoot), cassettes: { dir: tapes, mode: 'record' } } });
    const ask = withProvider({ only: ['up'] });
    let recorded: Anthropic.Message[];
    try {
      recorded = [await sdk(recorder).messages.create(ask), await sdk(recorder).messages.stream({ ...ask, stream: true }).finalMessage()];
    } finally {
      await recorder.close();
    }
    expect(readdirSync(tapes).length).toBeGreaterThanOrEqual(2);
    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: config(`http://127.0.0.1:${await deadPort()}/api`), cassettes: { dir: tapes, mode: 'replay' } } });
    try {
      const replayed = [await sdk(player).messages.create(ask), await sdk(player).messages.stream({ ...ask, stream: true }).finalMessage()];
      expect(replayed.map((m) => [m.content, m.usage.output_tokens, m.stop_reason])).toEqual(recorded.map((m) => [m.content, m.usage.output_tokens, m.stop_reason]));
    } finally {
      await player.close();
    }
  });

  it('router batch create --endpoint /v1/messages: each line run as chat upstream, each result a message', async () => {
    const file = join(dir, 'messages.jsonl');
    const lines: object[] = ['one', 'two', 'three'].map((w) => ({ custom_id: w, body: { model: 'test/tools', max_tokens: 20, messages: [{ role: 'user', content: `say ${w}` }] } }));
    lines.push({ custom_id: 'tool', body: { model: 'test/tools', max_tokens: 200, tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }], messages: [{ role: 'user', content: 'weather in Oslo' }] } });
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const env = { ROUTER_API_ROOT: gateway.apiRoot, ROUTER_API_KEY: gateway.store.firstKeys().apiKey, ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '', ROUTER_MODEL: '', NO_COLOR: '', ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'cli-state') };
    const res = await runCliInProcess(['batch', 'create', file, '--endpoint', '/v1/messages', '--model', 'test/tools', '--watch', '--results'], { env });
    expect(res.code, res.stderr).toBe(0);
    const results = res.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(results.map((r) => r.custom_id).sort()).toEqual(['one', 'three', 'tool', 'two']);
    for (const r of results) {
      const body = r.response.body;
      expect([r.response.status_code, body.type, body.role, body.usage.service_tier], r.custom_id).toEqual([200, 'message', 'assistant', 'batch']);
      expect(body.usage.output_tokens).toBeGreaterThan(0);
    }
    const tool = results.find((r) => r.custom_id === 'tool').response.body;
    expect(tool.stop_reason).toBe('tool_use');
    expect(tool.content.find((b: { type: string }) => b.type === 'tool_use').input.city).toEqual(expect.any(String));
    const g = await generation(gateway, results.find((r) => r.custom_id === 'one').response.body.id);
    expect(g.provider_name).toBe('up');
  });
});
