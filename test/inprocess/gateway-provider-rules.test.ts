import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';

// The gateway routed as if `provider.require_parameters`, `max_price`, `zdr`, `data_collection`,
// `quantizations` and `sort.partition` were not there: the first provider of the file
// answered a request whose tools it does not take, at a price over the caller's bound. Now each either
// passes providers over (named in router_metadata, or in the 404 when none is left) or is refused.
// Two other `router serve`s are the upstreams, spoken to only over HTTP.
let dir: string;
let alpha: Emulator;
let beta: Emulator;
let gateway: Emulator;
let key: string;
let sdk: OpenAI;

const TOOLS = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
const ASK = { model: 'test/m', messages: [{ role: 'user', content: 'hello there' }] };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gw-rules-'));
  alpha = await startEmulator({ stateDir: join(dir, 'alpha'), port: 0 });
  beta = await startEmulator({ stateDir: join(dir, 'beta'), port: 0 });
  // alpha: no tools for test/m, and the cheaper; beta: the default parameters (tools among them), dearer.
  const yaml = `
providers:
  - name: alpha
    base_url: ${alpha.apiRoot}/v1
    api_key_env: A_KEY
    responses: true
    models: { test/m: local/echo, test/dear: local/echo }
    supported_parameters: { test/m: [temperature, max_tokens] }
    prices: { test/m: { prompt: 0.000001, completion: 0.000002 }, test/dear: { prompt: 0.00001, completion: 0.00001 } }
  - name: beta
    base_url: ${beta.apiRoot}/v1
    api_key_env: B_KEY
    responses: true
    models: { test/m: local/echo, test/cheap: local/echo }
    prices: { test/m: { prompt: 0.000003, completion: 0.000004 }, test/cheap: { prompt: 0.0000001, completion: 0.0000001 } }
`;
  const config = parseProviders(yaml, { A_KEY: alpha.store.firstKeys().apiKey, B_KEY: beta.store.firstKeys().apiKey });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config } });
  key = gateway.store.firstKeys().apiKey;
  sdk = new OpenAI({ apiKey: key, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0, defaultHeaders: { 'x-router-metadata': 'enabled' } });
});
afterAll(async () => {
  await gateway?.close();
  await alpha?.close();
  await beta?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function chat(body: Record<string, unknown>): Promise<{ status: number; json?: any; events?: any[] }> {
  const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify({ ...ASK, ...body }) });
  const text = await res.text();
  if (!body.stream || res.status !== 200) return { status: res.status, json: JSON.parse(text) };
  const events = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
  return { status: res.status, events };
}

/** Who answered, the providers asked (router_metadata's attempts) and those passed over unasked, of a whole answer or a stream's chunks. */
function routed(r: { json?: any; events?: any[] }) {
  const meta = r.json?.router_metadata ?? r.events?.find((e) => e.router_metadata)?.router_metadata;
  return { provider: r.json?.provider ?? r.events?.[0]?.provider, attempts: meta?.attempts, passedOver: meta?.passed_over };
}

const toolsPassedOver = { provider: 'alpha', model: 'test/m', reason: 'alpha: test/m does not take tools (provider.require_parameters)', status: 404 };
const betaAnswered = { provider: 'beta', attempts: [{ provider: 'beta', model: 'test/m', ok: true }], passedOver: [toolsPassedOver] };

describe('provider.require_parameters through the gateway', () => {
  it('passes over the provider that does not take a parameter the request uses, plain and streamed, and names why', async () => {
    const plain = await chat({ tools: TOOLS, provider: { require_parameters: true } });
    expect(plain.status, JSON.stringify(plain.json)).toBe(200);
    expect(routed(plain)).toEqual(betaAnswered);
    const streamed = await chat({ tools: TOOLS, stream: true, provider: { require_parameters: true } });
    expect(streamed.status).toBe(200);
    expect(routed(streamed)).toEqual(betaAnswered);
    // Without it (or false) the file's first provider answers, as before.
    expect(routed((await chat({ tools: TOOLS, provider: { require_parameters: false } }))).provider).toBe('alpha');
    // A request using only what both take goes to the first; an empty list of tools uses none.
    expect(routed(await chat({ temperature: 0.5, provider: { require_parameters: true } })).provider).toBe('alpha');
    expect(routed(await chat({ tools: [], provider: { require_parameters: true } })).provider).toBe('alpha');
  });

  it('is the service 404 when no provider takes them all, each provider named with what it lacks', async () => {
    const why = 'No endpoints found that can handle the requested parameters: alpha: test/m does not take tools, reasoning (provider.require_parameters); beta: test/m does not take reasoning (provider.require_parameters)';
    for (const stream of [false, true]) {
      const r = await chat({ tools: TOOLS, reasoning: { effort: 'low' }, stream, provider: { require_parameters: true } });
      expect(r.status).toBe(404);
      expect(r.json.error.message).toBe(why);
    }
    // A json_schema response format needs structured_outputs as well.
    const schema = await chat({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } }, provider: { require_parameters: true } });
    expect(schema.status).toBe(200);
    expect(routed(schema).passedOver[0].reason).toBe('alpha: test/m does not take response_format, structured_outputs (provider.require_parameters)');
  });

  it('holds for the openai SDK as client, streamed and not', async () => {
    const body = { ...ASK, tools: TOOLS, provider: { require_parameters: true } } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    const whole = (await sdk.chat.completions.create(body)) as unknown as { provider: string; router_metadata: { passed_over: unknown[] } };
    expect(whole.provider).toBe('beta');
    expect(whole.router_metadata.passed_over).toEqual([toolsPassedOver]);
    const stream = await sdk.chat.completions.create({ ...body, stream: true });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.provider).filter(Boolean)[0]).toBe('beta');
    const none = sdk.chat.completions.create({ ...body, reasoning: { effort: 'low' } } as typeof body);
    await expect(none).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(none).rejects.toThrow(/No endpoints found that can handle the requested parameters: alpha: test\/m does not take tools, reasoning/);
  });

  it('holds for a Responses request: its tools, max_output_tokens and text.format read as the model list names them', async () => {
    const ask = async (body: Record<string, unknown>) => {
      const res = await fetch(`${gateway.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify({ model: 'test/m', input: 'hello there', provider: { require_parameters: true }, ...body }) });
      return { status: res.status, json: (await res.json()) as any };
    };
    const tools = await ask({ tools: [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: {} } }] });
    expect(tools.status, JSON.stringify(tools.json)).toBe(200);
    expect(routed(tools)).toEqual({ ...betaAnswered, provider: undefined });
    expect((await ask({ max_output_tokens: 20 })).json.router_metadata.attempts).toEqual([{ provider: 'alpha', model: 'test/m', ok: true }]);
    const schema = await ask({ text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } } } });
    expect(schema.json.router_metadata.passed_over[0].reason).toBe('alpha: test/m does not take response_format, structured_outputs (provider.require_parameters)');
  });
});

describe("the gateway's other provider rules", () => {
  it('max_price (USD per million tokens) passes over the dearer provider, and a bound none meets is a 404 naming each', async () => {
    const r = await chat({ provider: { order: ['beta', 'alpha'], max_price: { prompt: '2', completion: 3 } } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(routed(r)).toEqual({ provider: 'alpha', attempts: [{ provider: 'alpha', model: 'test/m', ok: true }], passedOver: [{ provider: 'beta', model: 'test/m', reason: 'beta: test/m costs 3 USD per million prompt tokens, over provider.max_price.prompt 2', status: 404 }] });
    const none = await chat({ provider: { max_price: { completion: 1 } } });
    expect(none.status).toBe(404);
    expect(none.json.error.message).toBe('No endpoints found matching your provider preferences: alpha: test/m costs 2 USD per million completion tokens, over provider.max_price.completion 1; beta: test/m costs 4 USD per million completion tokens, over provider.max_price.completion 1');
    expect((await chat({ provider: { max_price: { prompt: 'cheap' } } })).json.error.message).toBe('provider.max_price.prompt must be a number of USD from 0');
  });

  it('zdr, data_collection "deny" and a quantization other than unknown leave no upstream the gateway can vouch for', async () => {
    for (const [provider, words] of [
      [{ zdr: true }, 'the gateway cannot vouch for its upstream under provider.zdr: true'],
      [{ data_collection: 'deny' }, 'the gateway cannot vouch for its upstream under provider.data_collection: "deny"'],
      [{ quantizations: ['fp8'] }, 'test/m has no known quantization (provider.quantizations names fp8, not unknown)'],
    ] as const) {
      const r = await chat({ provider });
      expect(r.status, JSON.stringify(provider)).toBe(404);
      expect(r.json.error.message).toBe(`No endpoints found matching your provider preferences: alpha: ${words}; beta: ${words}`);
    }
    expect(routed(await chat({ provider: { quantizations: ['fp8', 'unknown'], data_collection: 'allow', zdr: false } })).provider).toBe('alpha');
    // The lists say the same: no upstream's endpoint is a ZDR one (they named every one), the fake models' are.
    const get = async (path: string) => (await (await fetch(`${gateway.apiRoot}${path}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
    const zdr = (await get('/v1/endpoints/zdr')).data.map((e: { model_id: string }) => e.model_id);
    expect(zdr).toContain('local/echo');
    expect(zdr.filter((id: string) => id.startsWith('test/'))).toEqual([]);
    expect((await get('/v1/models?zdr=true')).data.map((m: { id: string }) => m.id).filter((id: string) => id.startsWith('test/'))).toEqual([]);
  });

  it('a sort by "exacto" is refused: the gateway cannot tell which providers are exact (latency and throughput it measures)', async () => {
    for (const provider of [{ sort: 'exacto' }, { sort: { by: 'exacto' } }]) {
      const r = await chat({ provider });
      expect(r.status, JSON.stringify(provider)).toBe(400);
      expect(r.json.error.message).toMatch(/provider.sort "exacto": this gateway cannot tell which providers are exact/);
    }
    for (const provider of [{ sort: 'latency' }, { sort: { by: 'throughput' } }, { preferred_max_latency: 2 }]) expect((await chat({ provider })).status, JSON.stringify(provider)).toBe(200);
  });

  it('sort.partition "none" (and the route alias "sort") sorts the fallback models with the first', async () => {
    const ask = { model: 'test/dear', models: ['test/cheap'] };
    expect(routed(await chat({ ...ask, provider: { sort: 'price' } })).provider).toBe('alpha');
    expect(routed(await chat({ ...ask, provider: { sort: { by: 'price', partition: 'model' } } })).provider).toBe('alpha');
    const together = await chat({ ...ask, provider: { sort: { by: 'price', partition: 'none' } } });
    expect(together.json.model).toBe('test/cheap');
    expect(routed(together).provider).toBe('beta');
    expect(routed(await chat({ ...ask, route: 'sort', provider: { sort: 'price' } })).provider).toBe('beta');
  });
});

describe("router serve's own fake models under the same rules", () => {
  const fake = async (body: Record<string, unknown>) => {
    const res = await fetch(`${alpha.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${alpha.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ messages: ASK.messages, ...body }) });
    return { status: res.status, json: (await res.json()) as any };
  };

  it('require_parameters passes over a model without tools to the fallback that has them, else the 404', async () => {
    expect((await fake({ model: 'local/echo', models: ['local/tools'], tools: TOOLS })).json.model).toBe('local/echo');
    expect((await fake({ model: 'local/echo', models: ['local/tools'], tools: TOOLS, provider: { require_parameters: true } })).json.model).toBe('local/tools');
    const none = await fake({ model: 'local/echo', tools: TOOLS, provider: { require_parameters: true } });
    expect(none.status).toBe(404);
    expect(none.json.error.message).toBe('No endpoints found that can handle the requested parameters: local-alpha: local/echo does not take tools (provider.require_parameters); local-beta: local/echo does not take tools (provider.require_parameters)');
  });

  it('sort.partition "none" (and route "sort") answers from the cheaper fallback model', async () => {
    const ask = { model: 'local/thinker', models: ['local/echo'] };
    expect((await fake({ ...ask, provider: { sort: 'price' } })).json.model).toBe('local/thinker');
    expect((await fake({ ...ask, provider: { sort: { by: 'price', partition: 'none' } } })).json.model).toBe('local/echo');
    expect((await fake({ ...ask, route: 'sort', provider: { sort: 'price' } })).json.model).toBe('local/echo');
  });

  it('max_price passes over a model dearer than the bound', async () => {
    const r = await fake({ model: 'local/thinker', models: ['local/echo'], provider: { max_price: { prompt: 1 } } });
    expect(r.status).toBe(200);
    expect(r.json.model).toBe('local/echo');
    expect((await fake({ model: 'local/thinker', provider: { max_price: { prompt: 1 } } })).json.error.message).toBe('No endpoints found matching your provider preferences: local-beta: local/thinker costs 2 USD per million prompt tokens, over provider.max_price.prompt 1');
  });
});
