import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { schemaValidator, violations } from '../conformance/openapi-fixtures.js';
import { call, emulatorFolder, runBatch } from '../support/emulator-folder.js';

// A failed `/v1/messages` request of a batch has the answer that request gets sent alone: the
// OpenAPI's AnthropicMessagesErrorResponse (`{type: 'error', error: {type, message}}`), its status's
// Anthropic type in the item's `error.type` too. Before: chat's `{error: {code, message, metadata}}`,
// and `api_error` for anything but a 400. Deployed shows `error` only ("exactly one of response / error").
const folder = emulatorFolder('router-messages-batch-errors-');
const validate = schemaValidator('AnthropicMessagesErrorResponse');
const ask = (content: string, extra: Record<string, unknown> = {}) => ({ max_tokens: 16, messages: [{ role: 'user', content }], ...extra });

/** `POST /v1/messages` alone, as the SDK sends it: status and body. */
async function alone(e: Emulator, body: Record<string, unknown>, model: string, key = e.store.firstKeys().apiKey) {
  const res = await fetch(`${e.apiRoot}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ ...body, model }) });
  return { status: res.status, body: (await res.json()) as { type: string; error: Record<string, unknown>; request_id: string } };
}

/** A failed item held to the answer `sent` got alone (a batch asks an upstream more times: its words may say more tries). */
function sameAsAlone(flavor: string, item: any, sent: Awaited<ReturnType<typeof alone>>) {
  const words = String(sent.body.error.message).split(':')[0]!;
  expect(item.error).toMatchObject({ type: sent.body.error.type, message: expect.stringContaining(words), param: null, error_type: sent.body.error.error_type });
  if (flavor === 'deployed') return expect(item.response).toBeNull();
  expect(item.response.status_code).toBe(sent.status);
  expect(violations(validate, item.response.body)).toBe('');
  expect(item.response.body).toEqual({ type: 'error', error: { ...sent.body.error, message: item.error.message }, request_id: item.response.request_id });
}

describe.each(['spec', 'deployed'] as const)('a failed /v1/messages batch item (%s)', (flavor) => {
  it('a fake model’s refusal: the 400 the request alone gets, invalid_request_error', async () => {
    const e = await folder.start(flavor, { flavor });
    const seen = await runBatch(e, flavor, '/v1/messages', 'local/echo', [ask('fine'), ask('too hot', { temperature: 7 })]);
    const sent = await alone(e, ask('too hot', { temperature: 7 }), 'local/echo');
    expect([sent.status, sent.body.error.type]).toEqual([400, 'invalid_request_error']);
    sameAsAlone(flavor, seen.results.find((r: any) => r.custom_id === 'r1'), sent);
    expect(seen.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
  });

  it('an upstream that is rate limited, through a gateway: the status and type the request alone gets', async () => {
    const upstream = await folder.start(`${flavor}-upstream`);
    const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/echo }, prices: { test/m: { prompt: 0.001, completion: 0.002 } } }\n`;
    const gateway = await folder.start(`${flavor}-gateway`, { flavor, gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
    const faults = await call(upstream, '/_emulator/faults', { faults: ['429,retry_after=0,path=/v1/chat/completions'] }, upstream.store.firstKeys().managementKey);
    expect(faults.status).toBe(200);
    const seen = await runBatch(gateway, flavor, '/v1/messages', 'test/m', [ask('limited')]);
    const sent = await alone(gateway, ask('limited'), 'test/m');
    expect(sent.body.error.type).toBe('rate_limit_error');
    sameAsAlone(flavor, seen.results[0], sent);
  });

  it('a request never sent, the credits run out: the 402 the request alone gets, billing_error', async () => {
    const upstream = await folder.start(`${flavor}-upstream-402`);
    const yaml = `providers:\n  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/echo }, prices: { test/m: { prompt: 0.001, completion: 0.002 } } }\n`;
    const gateway = await folder.start(`${flavor}-gateway-402`, { flavor, gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
    const poor = gateway.store.createWorkspace('poor', 1e-9).apiKey;
    const path = flavor === 'deployed' ? '/beta/batches' : '/v1/batches';
    const created = await call(gateway, path, { endpoint: '/v1/messages', model: 'test/m', completion_window: '24h', requests: [{ custom_id: 'r0', body: ask('unpaid') }] }, poor);
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    let seen: any;
    for (;;) {
      seen = (await call(gateway, `${path}/${created.body.id}`, undefined, poor)).body;
      if (['completed', 'failed'].includes(seen.status)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen.status).toBe('failed');
    const sent = await alone(gateway, ask('unpaid'), 'test/m', poor);
    expect([sent.status, sent.body.error.type]).toEqual([402, 'billing_error']);
    // Deployed, a failed batch shows no results ("results null unless completed").
    if (flavor === 'deployed') return expect(seen.results).toBeNull();
    const item = seen.results[0];
    expect(item.error).toMatchObject({ type: 'billing_error', param: null, error_type: 'payment_required' });
    expect(violations(validate, item.response.body)).toBe('');
    expect(item.response).toMatchObject({ status_code: 402, body: { type: 'error', error: { type: 'billing_error', error_type: 'payment_required' }, request_id: item.response.request_id } });
  });
});
