import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';
import { localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';
import { ProvidersFileError, parseProviders } from '../../src/emulator/providers/config.js';

// A gateway's upstream chat model was listed with the fake models' default parameters only: no
// `tools`, `tool_choice` or `parallel_tool_calls`, every endpoint's `supports_tool_choice` false, so
// `router models --supports tools` hid it, though the gateway relays a request's tools as sent and the
// upstream answers with tool calls. Now they are listed unless the providers file's
// `supported_parameters` names the model's own list (docs/gateway.md).
let gw: Awaited<ReturnType<typeof testGateway>>;
let up: LocalUpstream;
let dir: string;
const asked: Record<string, unknown>[] = [];
const CALL = { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gw-params-'));
  up = await localUpstream((_req, res, body) => {
    asked.push(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [CALL] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }));
  });
  gw = await testGateway(
    `providers:
  - name: alpha
    base_url: "${up.baseUrl}"
    models: { test/m: m, test/both: b }
    embedding_models: { test/vec: v }
  - name: beta
    base_url: "${up.baseUrl}"
    models: { test/plain: p, test/both: b }
    supported_parameters: { test/plain: [max_tokens, temperature], test/both: [temperature] }
`,
    'gw-params',
  );
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

const listed = async (id: string) => (await gw.get('/v1/models?output_modalities=all')).body.data.find((m: any) => m.id === id);
const endpoints = async (id: string) => (await gw.get(`/v1/models/${id}/endpoints`)).body.data.endpoints.map((e: any) => [e.provider_name, e.supported_parameters.includes('tools'), e.supports_tool_choice.required]);

describe("a gateway's upstream chat model", () => {
  it('is listed as taking tools, which the gateway relays and the upstream answers with a call', async () => {
    const m = await listed('test/m');
    expect(m.supported_parameters).toEqual(expect.arrayContaining(['tools', 'tool_choice', 'parallel_tool_calls', 'temperature', 'max_tokens']));
    expect(await endpoints('test/m')).toEqual([['alpha', true, true]]);
    const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', messages: [{ role: 'user', content: 'weather in Oslo?' }], tools, tool_choice: 'required', parallel_tool_calls: false }) });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body.choices[0].message.tool_calls).toEqual([CALL]);
    expect(asked.at(-1)).toMatchObject({ model: 'm', tools, tool_choice: 'required', parallel_tool_calls: false });
  });

  it('lists what the providers file names instead; a model takes what any of its providers takes, each endpoint its own', async () => {
    expect((await listed('test/plain')).supported_parameters).toEqual(['temperature', 'max_tokens']) // in the OpenAPI enum's order;
    expect(await endpoints('test/plain')).toEqual([['beta', false, false]]);
    expect((await listed('test/both')).supported_parameters).toContain('tools');
    expect(await endpoints('test/both')).toEqual([['alpha', true, true], ['beta', false, false]]);
    expect((await listed('test/vec')).supported_parameters).toEqual([]); // an embedding model takes none of the OpenAPI's names
  });

  it('router models --supports tools shows it, and not the one whose file says no tools', async () => {
    const env = { ROUTER_API_ROOT: gw.gateway.apiRoot, ROUTER_API_KEY: gw.gateway.store.firstKeys().apiKey, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'state'), ROUTER_KEYCHAIN: 'off', ROUTER_PROFILE: '' };
    const r = await runInProcess(['models', 'test/', '--supports', 'tools'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trimEnd().split('\n').map((l) => l.split('\t')[0]).sort()).toEqual(['test/both', 'test/m']);
  });

  it('a parameter the model list has no name for, or a model not among the chat models, is a mistake of the file', () => {
    const file = (setting: string) => `providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { test/m: m }, embedding_models: { test/e: e }, supported_parameters: ${setting} }\n`;
    expect(() => parseProviders(file('{ test/m: [tool] }'), {})).toThrow(new ProvidersFileError('provider up: supported_parameters.test/m: unknown parameter "tool" (known: temperature, top_p, top_k, min_p, top_a, frequency_penalty, presence_penalty, repetition_penalty, max_tokens, max_completion_tokens, logit_bias, logprobs, top_logprobs, prediction, seed, response_format, structured_outputs, stop, tools, tool_choice, parallel_tool_calls, include_reasoning, reasoning, reasoning_effort, web_search_options, verbosity)'));
    expect(() => parseProviders(file('{ test/e: [temperature] }'), {})).toThrow('supported_parameters.test/e names a model that is not among its chat models');
    expect(() => parseProviders(file('{ test/m: tools }'), {})).toThrow('supported_parameters.test/m must be a list of parameter names');
    expect(parseProviders(file('{ test/m: [tools, temperature] }'), {}).providers[0]!.models[0]!.parameters).toEqual(['temperature', 'tools']);
  });
});
