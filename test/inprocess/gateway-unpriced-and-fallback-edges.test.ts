/** The gateway's prices and fallbacks at their edges, over real HTTP to an in-process `router serve`: a hang-up on an unpriced model, a recorded 402, a long models list, an unpriced model's cost_details, a router priced -1. */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { round } from '../../src/emulator/models/models.js';
import { deadPort, localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';
import { startFixtureServer } from '../support/fixture-server.js';
import { runInProcess } from '../support/inprocess.js';
import { call, emulatorFolder } from '../support/emulator-folder.js';

const folder = emulatorFolder('router-gateway-unpriced-edges-');
const emulator = folder.start;

describe('a hang-up on a gateway model without prices, before the upstream’s usage came', () => {
  // Before: charged $0 whatever the upstream had charged for its answers (the model is listed at 0).
  // Now: at the per-token prices the upstream's last answer reported (its cost_details over its tokens);
  // with none reported yet, nothing is known: $0, the generation kept with its tokens.
  const PROMPT = 2e-6;
  const COMPLETION = 3e-5;
  const SENT = 4;
  let answered = 0;
  const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ id: `gen-up-${answered}`, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  let upstream: LocalUpstream;
  let gateway: Emulator;

  beforeAll(async () => {
    upstream = await localUpstream((_req, res, body) => {
      answered++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant' }));
      for (let i = 0; i < SENT; i++) res.write(chunk({ content: `word${i} ` }));
      if ((body.messages as { content: string }[])[0]!.content !== 'whole') return; // then nothing: the caller hangs up
      const usage = { prompt_tokens: 10, completion_tokens: SENT, total_tokens: 10 + SENT, cost: 10 * PROMPT + SENT * COMPLETION, cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 10 * PROMPT, upstream_inference_completions_cost: SENT * COMPLETION } };
      res.end(`${chunk({}, { choices: [], usage })}data: [DONE]\n\n`);
    });
    const yaml = `providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/unpriced: m, test/other: m } }\n`;
    gateway = await emulator('unpriced-hang-up', { gateway: { config: parseProviders(yaml, {}) } });
  });

  afterAll(async () => {
    await upstream?.close();
  });

  async function hangUp(ws: string, model: string): Promise<{ key: string; id: string }> {
    const { managementKey: key } = gateway.store.createWorkspace(ws, 1);
    const caller = new AbortController();
    const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'part' }] }) });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes(`word${SENT - 1}`)) text += Buffer.from((await reader.read()).value!).toString();
    caller.abort();
    return { key, id: /"id":"(gen-\d+-[0-9a-f]+)"/.exec(text)![1]! };
  }

  const generation = (key: string, id: string) =>
    vi.waitFor(async () => {
      const got = await call(gateway, `/v1/generation?id=${id}`, undefined, key);
      expect(got.status).toBe(200);
      return got.body.data;
    }, SETTLE);

  it('nothing reported yet: nothing charged, the generation kept as cancelled with the tokens relayed', async () => {
    const { key, id } = await hangUp('unpriced-first', 'test/other');
    // "user: part" is 3 tokens as the emulator counts; SENT words of one token each.
    expect(await generation(key, id)).toMatchObject({ cancelled: true, tokens_prompt: 3, tokens_completion: SENT, total_cost: 0 });
    expect(gateway.store.balance('unpriced-first')).toBe(1);
  });

  it('after an answer whose usage reported its cost: the prompt and the tokens relayed at the prices it reported', async () => {
    const whole = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/unpriced', stream: true, messages: [{ role: 'user', content: 'whole' }] }) });
    expect(await whole.text()).toContain('"upstream_inference_prompt_cost"');
    const { key, id } = await hangUp('unpriced-cut', 'test/unpriced');
    const owed = round(round(3 * PROMPT) + round(SENT * COMPLETION));
    await vi.waitFor(() => expect(gateway.store.balance('unpriced-cut')).toBeCloseTo(1 - owed, 10), SETTLE);
    expect(await generation(key, id)).toMatchObject({ cancelled: true, tokens_prompt: 3, tokens_completion: SENT, total_cost: owed });
  });
});

describe('a cassette recorded before stop 59 holding a provider’s 402', () => {
  // A provider's 402 is the gateway's own account at it out of credits: passed over live since stop 59.
  // A cassette recorded before kept it as an answer, and replay relayed it as the caller's 402 ("Insufficient
  // credits" of the gateway's account). Now its take is a failure passed over, then the next provider's take.
  it('replays as that provider passed over: the next provider’s answer, the 402 named in router_metadata', async () => {
    const answer = (content: string) => ({ id: `gen-${content}`, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    const busy = await localUpstream((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 503, message: 'busy' } }));
    });
    const other = await localUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer('from b')));
    });
    const cassettes = join(folder.dir, 'cassettes-402');
    const config = (a: string, b: string) => parseProviders(`providers:\n  - { name: a, base_url: "${a}", models: { t/m: m } }\n  - { name: b, base_url: "${b}", models: { t/m: m } }\n`, {});
    const ask = async (e: Emulator) => {
      const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify({ model: 't/m', provider: { order: ['a', 'b'] }, messages: [{ role: 'user', content: 'hi' }] }) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const recorder = await emulator('record-402', { gateway: { config: config(busy.baseUrl, other.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
    expect((await ask(recorder)).body.choices[0].message.content).toBe('from b');
    await folder.stop(recorder);
    await Promise.all([busy.close(), other.close()]);
    // Provider a's take as a build before stop 59 recorded a 402: an answer, no `failure`.
    const files = readdirSync(cassettes).filter((f) => JSON.parse(readFileSync(join(cassettes, f), 'utf8')).provider === 'a');
    expect(files).toHaveLength(1);
    const old = JSON.parse(readFileSync(join(cassettes, files[0]!), 'utf8'));
    delete old.response.failure;
    old.response = { ...old.response, status: 402, headers: { 'content-type': 'application/json' }, body: { error: { code: 402, message: 'Insufficient credits: this request costs $3.86, the balance is $1.63' } } };
    writeFileSync(join(cassettes, files[0]!), JSON.stringify(old, null, 2));

    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    const player = await emulator('replay-402', { gateway: { config: config(dead, dead), cassettes: { dir: cassettes, mode: 'replay', timing: 0 } } });
    const replayed = await ask(player);
    // Before: 402 "Insufficient credits: this request costs $3.86, the balance is $1.63".
    expect(replayed.status, JSON.stringify(replayed.body)).toBe(200);
    expect(replayed.body.choices[0].message.content).toBe('from b');
    expect(JSON.stringify(replayed.body.router_metadata)).toContain('402');
  });
});

describe('a models (fallback) list longer than the service takes', () => {
  // The spec and the OpenAPI give `models` no bound; the service answers more than 3 with a 400 "'models'
  // array must have 3 items or fewer.". Before: any length, each id an attempt and a line of router_metadata.
  it('is a 400 naming the bound, on the fake models and the gateway, chat and Responses; 3 are taken', async () => {
    const upstream = await emulator('models-bound-upstream');
    const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, responses: true, models: { test/m: local/echo } }\n`;
    const gateway = await emulator('models-bound-gateway', { gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
    const many = Array.from({ length: 500 }, (_, i) => `nobody/model-${i}`);
    for (const [model, path, asked] of [
      ['local/echo', '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }],
      ['test/m', '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }],
      ['local/echo', '/v1/responses', { input: 'hi' }],
      ['test/m', '/v1/responses', { input: 'hi' }],
    ] as const) {
      const refused = await call(gateway, path, { model, models: [model, ...many.slice(0, 3)], ...asked });
      expect(refused.status, `${model} ${path}: ${JSON.stringify(refused.body).slice(0, 300)}`).toBe(400);
      expect(refused.body.error.message).toContain("'models' array must have 3 items or fewer");
      const taken = await call(gateway, path, { model, models: [model, ...many.slice(0, 2)], ...asked });
      expect(taken.status, `${model} ${path}: ${JSON.stringify(taken.body).slice(0, 300)}`).toBe(200);
    }
  });
});

describe('an unpriced model’s usage: cost and cost_details agree', () => {
  // Without prices the gateway charges the upstream's usage.cost, but passed its cost_details on verbatim:
  // a split of another sum, or of a cost it did not charge (no usage.cost: charged $0, details of $0.3).
  // The yaml's usage (ChatUsage, CostDetails): cost_details are the cost's prompt and completion sides.
  it('keeps the upstream’s when they split its cost, null when they do not, zeros when nothing is charged', async () => {
    const usages: Record<string, Record<string, unknown>> = {
      split: { cost: 0.003, cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.001, upstream_inference_completions_cost: 0.002 } },
      other: { cost: 0.003, cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.02, upstream_inference_completions_cost: 0.05 } },
      uncosted: { cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.1, upstream_inference_completions_cost: 0.2 } },
    };
    const upstream = await localUpstream((_req, res, body) => {
      const which = (body.messages as { content: string }[])[0]!.content;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `gen-${which}`, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, ...usages[which] } }));
    });
    const gateway = await emulator('cost-details', { gateway: { config: parseProviders(`providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/unpriced: m } }\n`, {}) } });
    const ask = async (which: string) => (await call(gateway, '/v1/chat/completions', { model: 'test/unpriced', messages: [{ role: 'user', content: which }] })).body.usage;
    try {
      expect(await ask('split')).toMatchObject({ cost: 0.003, cost_details: usages.split!.cost_details });
      // Before: cost 0.003 with details summing to 0.07.
      expect(await ask('other')).toMatchObject({ cost: 0.003, cost_details: null });
      // Before: cost 0 with details summing to 0.3.
      expect(await ask('uncosted')).toMatchObject({ cost: 0, cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0, upstream_inference_completions_cost: 0 } });
    } finally {
      await upstream.close();
    }
  });
});

describe('router models with a router priced -1 (its price is the model it picks)', () => {
  // The service lists openrouter/auto at prompt and completion "-1". Before: the table said -1000000.00, and
  // --sort price put it first as the cheapest.
  it('shows "varies" in the table and piped lines, sorts it last by price, and --json gives the list’s -1', async () => {
    const model = (id: string, prompt: string, completion: string) => ({ id, name: id, context_length: 1000, pricing: { prompt, completion }, architecture: { input_modalities: ['text'], output_modalities: ['text'] } });
    const server = await startFixtureServer({ 'GET /api/v1/models': { body: { data: [model('openrouter/auto', '-1', '-1'), model('some/cheap', '0.000001', '0.000002')] } } });
    const stateDir = join(folder.dir, 'models-state');
    mkdirSync(stateDir);
    const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1', ROUTER_STATE_DIR: stateDir };
    try {
      const piped = await runInProcess(['models', '--sort', 'price'], { env });
      expect(piped).toMatchObject({ code: 0, stdout: 'some/cheap\tsome/cheap\t1000\t1.00\t2.00\ttext->text\nopenrouter/auto\topenrouter/auto\t1000\tvaries\tvaries\ttext->text\n' });
      const table = await runInProcess(['models', 'auto'], { env, tty: { stdout: true }, columns: 120 });
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/openrouter\/auto.*varies.*varies/);
      expect(table.stdout).not.toContain('-1000000');
      const json = await runInProcess(['models', 'auto', '--json', 'id,pricing'], { env });
      expect(JSON.parse(json.stdout)).toEqual([{ id: 'openrouter/auto', pricing: { prompt: '-1', completion: '-1' } }]);
    } finally {
      await server.close();
    }
  });
});
