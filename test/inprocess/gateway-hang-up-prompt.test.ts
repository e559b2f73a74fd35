import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { SETTLE } from '../support/until.js';

// A caller who hangs up mid-stream before the upstream's usage came pays the prompt as counted from
// its text, not the hold's bound (a token per byte of the request): hanging up never costs more than
// the same request answered whole. The upstream is another emulator, spoken to over HTTP, with the
// `openai` package as the caller.
let dir: string;
let upstream: Emulator;
let gateway: Emulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-hang-up-prompt-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  // A dear prompt and a cheap answer: the prompt's count is most of what a hang-up costs.
  const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, responses: true, models: { test/lorem: local/lorem }, prices: { test/lorem: { prompt: 0.001, completion: 0.000001 } } }\n`;
  const config = parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Generation = { cancelled: boolean; total_cost: number; tokens_prompt: number; tokens_completion: number };

const generation = (apiKey: string, id: string) =>
  vi.waitFor(async () => {
    const r = await fetch(`${gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: Generation }).data;
  }, SETTLE);

const system = 'You are a careful writer. '.repeat(60);

describe('a hang-up through a gateway, before the upstream said its usage', () => {
  it('chat: charged the prompt as the upstream counts it, never more than the whole answer', async () => {
    const { apiKey } = gateway.store.createWorkspace('chat-cut', 100);
    const caller = new OpenAI({ apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0 });
    const ask = () => caller.chat.completions.create({ model: 'test/lorem', stream: true, max_tokens: 100_000, messages: [{ role: 'system', content: system }, { role: 'user', content: 'write 20000 words' }] });
    let wholeId = '';
    for await (const c of await ask()) wholeId = c.id;
    const whole = await generation(apiKey, wholeId);
    expect(whole.cancelled).toBe(false);
    let cutId = '';
    let content = 0;
    for await (const c of await ask()) {
      cutId = c.id;
      if (c.choices[0]?.delta.content && ++content === 2) break;
    }
    const cut = await generation(apiKey, cutId);
    expect(cut).toMatchObject({ cancelled: true, tokens_prompt: whole.tokens_prompt });
    expect(cut.tokens_completion).toBeLessThan(whole.tokens_completion);
    // Before: the prompt was charged as 1,722 tokens (the request's bytes), not the upstream's 367: 4.4 times the whole answer.
    expect(cut.total_cost).toBeLessThanOrEqual(whole.total_cost);
    await vi.waitFor(() => expect(gateway.store.balance('chat-cut')).toBeCloseTo(100 - whole.total_cost - cut.total_cost, 10), SETTLE);
  });

  it('Responses: alike, its instructions and input counted', async () => {
    const { apiKey } = gateway.store.createWorkspace('resp-cut', 100);
    const caller = new OpenAI({ apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0 });
    const ask = () => caller.responses.create({ model: 'test/lorem', stream: true, max_output_tokens: 100_000, instructions: system, input: [{ role: 'user', content: 'write 20000 words' }] });
    let wholeId = '';
    for await (const e of await ask()) if (e.type === 'response.completed') wholeId = e.response.id;
    const whole = await generation(apiKey, wholeId);
    expect(whole.cancelled).toBe(false);
    let cutId = '';
    let deltas = 0;
    for await (const e of await ask()) {
      if (e.type === 'response.created') cutId = e.response.id;
      if (e.type === 'response.output_text.delta' && ++deltas === 2) break;
    }
    const cut = await generation(apiKey, cutId);
    expect(cut).toMatchObject({ cancelled: true, tokens_prompt: whole.tokens_prompt });
    expect(cut.total_cost).toBeLessThanOrEqual(whole.total_cost);
  });
});
