import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { FLAVORS, startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startedForAll } from '../support/for-all.js';
import { gatewayForAll } from '../support/gateway-for-all.js';

// A `provider=` status fault was honoured by the fake models' chat and Responses alone: over a providers file the
// gateway asked the named upstream anyway, and embeddings and speech took none even over the fake models. Now on
// every route it fails that provider alone, not asked, as if it had answered that status: the same table to the
// fake routing and to a gateway over upstreams `alpha` and `beta` that serve the fake providers' models.
const messages = [{ role: 'user', content: 'hi' }];

/** The upstreams' answers: whole, whatever was asked (a stream request answered whole is streamed by the gateway). */
function answer(url: string, res: ServerResponse) {
  if (url.endsWith('/audio/speech')) {
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    return res.end(Buffer.alloc(64, 1));
  }
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, input_tokens: 1, output_tokens: 1 };
  const body = url.endsWith('/embeddings')
    ? { object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: [0.5, 0.5] }], usage: { prompt_tokens: 1, total_tokens: 1 } }
    : url.endsWith('/responses')
      ? { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi', annotations: [] }] }], usage }
      : { id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const up = gatewayForAll({
  prefix: 'router-provider-fault-routes-',
  upstreams: { alpha: (req, res) => answer(req.url!, res), beta: (req, res) => answer(req.url!, res) },
  providers: (urls) => `local_models: false
providers:
  - { name: alpha, base_url: "${urls.alpha}", responses: true, models: { local/echo: m }, embedding_models: { local/embed: e }, speech_models: { local/tts: t } }
  - { name: beta, base_url: "${urls.beta}", responses: true, models: { local/echo: m }, speech_models: { local/tts-basic: t } }
`,
});
const fakes = FLAVORS.map((flavor) => [`the fake routing (${flavor})`, startedForAll(() => startEmulator({ stateDir: join(up.dir, flavor), port: 0, flavor }))] as const);

const FAULT = '503,provider=local-alpha,retry_after=7';
const NO_FALLBACKS = { allow_fallbacks: false };

/** A route, its request, the fault, then what is seen: the status, who answered, each provider asked and what it said, the Retry-After. */
const TABLE: [string, string, Record<string, unknown>, string, number, string | undefined, string[], string | null][] = [
  ['chat', '/v1/chat/completions', { model: 'local/echo', messages }, FAULT, 200, 'local-beta', ['local/echo@local-alpha 503', 'local/echo@local-beta 200'], null],
  ['chat streamed', '/v1/chat/completions', { model: 'local/echo', messages, stream: true }, FAULT, 200, 'local-beta', ['local/echo@local-alpha 503', 'local/echo@local-beta 200'], null],
  ['chat, allow_fallbacks false', '/v1/chat/completions', { model: 'local/echo', messages, provider: NO_FALLBACKS }, FAULT, 502, undefined, ['local/echo@local-alpha 503'], '7'],
  ['chat streamed, allow_fallbacks false, a 429', '/v1/chat/completions', { model: 'local/echo', messages, stream: true, provider: NO_FALLBACKS }, '429,provider=local-alpha,retry_after=3', 429, undefined, ['local/echo@local-alpha 429'], '3'],
  ['Responses', '/v1/responses', { model: 'local/echo', input: 'hi' }, FAULT, 200, 'local-beta', ['local/echo@local-alpha 503', 'local/echo@local-beta 200'], null],
  ['Responses, the other provider named', '/v1/responses', { model: 'local/echo', input: 'hi' }, '503,provider=local-beta', 200, 'local-alpha', ['local/echo@local-alpha 200'], null],
  ['messages', '/v1/messages', { model: 'local/echo', max_tokens: 16, messages }, FAULT, 200, 'local-beta', ['local/echo@local-alpha 503', 'local/echo@local-beta 200'], null],
  ['embeddings: its one provider fails', '/v1/embeddings', { model: 'local/embed', input: 'hi' }, FAULT, 502, undefined, ['local/embed@local-alpha 503'], '7'],
  ['speech: the models list falls back', '/v1/audio/speech', { model: 'local/tts', models: ['local/tts', 'local/tts-basic'], input: 'hi', voice: 'alloy', response_format: 'mp3' }, FAULT, 200, 'local-beta', ['local/tts@local-alpha 503', 'local/tts-basic@local-beta 200'], null],
  ['speech: its one provider fails', '/v1/audio/speech', { model: 'local/tts', input: 'hi', voice: 'alloy', response_format: 'mp3' }, FAULT, 502, undefined, ['local/tts@local-alpha 503'], '7'],
];

/** The request with the fault in its header, and what the table compares: the metadata from the body, a stream's event, or (audio) a header. */
async function seen(e: Emulator, path: string, body: Record<string, unknown>, fault: string) {
  const keys = e.store.firstKeys();
  const key = path === '/v1/audio/speech' ? keys.managementKey : keys.apiKey;
  const res = await fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-openrouter-metadata': 'enabled', 'x-router-fault': fault }, body: JSON.stringify(body) });
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  let meta: { attempts: { model: string; provider: string; status: number }[] } | undefined;
  if (type.startsWith('audio/')) meta = JSON.parse(res.headers.get('x-openrouter-metadata')!);
  else if (type.startsWith('text/event-stream')) meta = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((e) => e.openrouter_metadata)?.openrouter_metadata;
  else meta = JSON.parse(text).openrouter_metadata;
  const attempts = (meta?.attempts ?? []).map((a) => `${a.model}@${a.provider} ${a.status}`);
  return { status: res.status, answered: meta?.attempts.find((a) => a.status === 200)?.provider, attempts, retryAfter: res.headers.get('retry-after') };
}

describe.each([...fakes, ['the gateway over local upstreams', up] as const])('a provider= fault, %s', (_name, target) => {
  it.each(TABLE)('%s', async (_route, path, body, fault, status, answered, attempts, retryAfter) => {
    const e = 'gateway' in target ? target.gateway : target;
    const before = 'gateway' in target ? [target.upstream('alpha').seen.length, target.upstream('beta').seen.length] : [];
    // The fake providers' names become the gateway's (the providers file may not take the fake ones').
    const named = 'gateway' in target ? (text: string) => text.replaceAll('local-', '') : (text: string) => text;
    const expected = JSON.parse(named(JSON.stringify({ status, answered, attempts, retryAfter }))) as unknown;
    expect(await seen(e, path, body, named(fault))).toEqual(expected);
    // The provider the fault names was never asked; the one that answered was, once.
    if ('gateway' in target) expect([target.upstream('alpha').seen.length - before[0]!, target.upstream('beta').seen.length - before[1]!]).toEqual([answered === 'local-alpha' ? 1 : 0, answered === 'local-beta' ? 1 : 0]);
  });
});

// A status the gateway does not pass over (a 400: the request itself is wrong, which no backup provider would
// answer otherwise) went back to the caller over the gateway, but the fake routing fell back on it and answered 200.
// Now both give the caller the 400, no other provider asked: chat, Responses, embeddings.
describe.each([...fakes, ['the gateway over local upstreams', up] as const])("a provider= 400 is the caller's, %s", (_name, target) => {
  it.each([
    ['/v1/chat/completions', { model: 'local/echo', messages }],
    ['/v1/chat/completions', { model: 'local/echo', messages, stream: true }],
    ['/v1/responses', { model: 'local/echo', input: 'hi' }],
    ['/v1/embeddings', { model: 'local/embed', input: 'hi' }],
  ] as const)('%s %j', async (path, body) => {
    const e = 'gateway' in target ? target.gateway : target;
    const alpha = 'gateway' in target ? 'alpha' : 'local-alpha';
    const asked = 'gateway' in target ? [target.upstream('alpha').seen.length, target.upstream('beta').seen.length] : [];
    const res = await fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json', 'x-router-fault': `400,provider=${alpha}` }, body: JSON.stringify(body) });
    const text = await res.text();
    expect([res.status, (JSON.parse(text) as { error?: { message: string } }).error?.message]).toEqual([400, `${alpha}: Injected fault: HTTP 400`]);
    if ('gateway' in target) expect([target.upstream('alpha').seen.length, target.upstream('beta').seen.length]).toEqual(asked);
  });
});

// The fake models' 401–404 `provider=` fault said no `x-should-retry`, where the gateway's (a provider's refusal of
// the key or the model: its last word) said `false`: a client retried what would fail again. Now both say it.
describe.each([...fakes, ['the gateway over local upstreams', up] as const])('x-should-retry after a provider= fault, %s', (_name, target) => {
  it.each([
    [401, 'false'],
    [404, 'false'],
    [503, null],
    [408, null],
  ] as const)('%s: %s', async (status, retry) => {
    const e = 'gateway' in target ? target.gateway : target;
    const alpha = 'gateway' in target ? 'alpha' : 'local-alpha';
    for (const [path, body] of [
      ['/v1/chat/completions', { model: 'local/echo', messages, provider: NO_FALLBACKS }],
      ['/v1/embeddings', { model: 'local/embed', input: 'hi' }],
    ] as const) {
      const res = await fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json', 'x-router-fault': `${status},provider=${alpha}` }, body: JSON.stringify(body) });
      await res.text();
      expect([path, res.status, res.headers.get('x-should-retry')]).toEqual([path, 502, retry]);
    }
  });
});

// So did a fake model marked unavailable (asked again, it is down again), which a gateway's fake models say `false` of.
describe.each(fakes)('x-should-retry after local/unavailable, %s', (_name, e) => {
  it('says false', async () => {
    const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/unavailable', messages }) });
    await res.text();
    expect([res.status, res.headers.get('x-should-retry')]).toEqual([502, 'false']);
  });
});

// A provider= 529 or 524 fault said `provider_unavailable` (and, on messages, `api_error`) when every provider failed
// so, where an upstream's own answer of that status says it was overloaded or timed out (bounded.ts statusFailure):
// now the fault's failure has its status's cause, on both routings, in each route's error shape.
describe.each([...fakes, ['the gateway over local upstreams', up] as const])('the cause of a provider= 529 or 524, %s', (_name, target) => {
  it.each([
    ['529', 'provider_overloaded', 'overloaded_error'],
    ['524', 'timeout', 'timeout_error'],
  ] as const)('%s: %s', async (status, cause, anthropicType) => {
    const e = 'gateway' in target ? target.gateway : target;
    const alpha = 'gateway' in target ? 'alpha' : 'local-alpha';
    const key = e.store.firstKeys().apiKey;
    const seenTypes: string[] = [];
    for (const [path, body] of [
      ['/v1/chat/completions', { model: 'local/echo', messages, provider: NO_FALLBACKS }],
      ['/v1/chat/completions', { model: 'local/echo', messages, provider: NO_FALLBACKS, stream: true }],
      ['/v1/responses', { model: 'local/echo', input: 'hi', provider: NO_FALLBACKS }],
      ['/v1/messages', { model: 'local/echo', max_tokens: 16, messages, provider: NO_FALLBACKS }],
      ['/v1/embeddings', { model: 'local/embed', input: 'hi' }],
    ] as const) {
      const res = await fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-router-fault': `${status},provider=${alpha}` }, body: JSON.stringify(body) });
      const error = ((await res.json()) as { error: { type?: string; error_type?: string; metadata?: { error_type: string } } }).error;
      seenTypes.push(`${path} ${res.status} ${error.metadata?.error_type ?? `${error.type} ${error.error_type}`}`);
    }
    expect(seenTypes).toEqual([
      `/v1/chat/completions 502 ${cause}`,
      `/v1/chat/completions 502 ${cause}`,
      `/v1/responses 502 ${cause}`,
      `/v1/messages 502 ${anthropicType} ${cause}`,
      `/v1/embeddings 502 ${cause}`,
    ]);
  });
});
