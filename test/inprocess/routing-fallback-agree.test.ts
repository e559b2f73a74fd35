import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { FLAVORS, startEmulator, type Emulator, type Flavor } from '../../src/emulator/server.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { runInProcess } from '../support/inprocess.js';
import { failing, type LocalUpstream } from '../support/upstreams.js';

// `router serve`'s own routing never asked a model's second provider: `allow_fallbacks` changed nothing, and no
// provider of a fake model could fail alone. Now `--fault "502,provider=local-alpha"` fails that provider, and the
// fake routing falls back as a gateway does over an upstream `alpha` that answers 502: the same table to both.
let chain: GatewayChain;
let alpha: LocalUpstream;
const fakes = new Map<Flavor, Emulator>();

const PRICES = 'local/echo: { prompt: 0.000001, completion: 0.000002 }, local/lorem: { prompt: 0.0000005, completion: 0.0000015 }';

beforeAll(async () => {
  alpha = await failing(502);
  chain = await startGatewayChain('routing-fallback-agree', (root) => `
local_models: false
providers:
  - { name: alpha, base_url: "${alpha.baseUrl}", api_key_env: UP_KEY, models: { local/echo: local/echo, local/lorem: local/lorem, local/tools: local/tools }, prices: { ${PRICES}, local/tools: { prompt: 0.000001, completion: 0.000002 } } }
  - { name: beta, base_url: "${root}/v1", api_key_env: UP_KEY, models: { local/echo: local/echo, local/lorem: local/lorem, local/thinker: local/thinker }, prices: { ${PRICES}, local/thinker: { prompt: 0.000002, completion: 0.000004 } } }
`, { locals: [alpha] });
  for (const flavor of FLAVORS) fakes.set(flavor, await startEmulator({ stateDir: join(chain.dir, flavor), port: 0, flavor, faults: ['502,provider=local-alpha'] }));
});
afterAll(async () => {
  for (const e of fakes.values()) await e.close();
  await chain?.close();
});

const messages = [{ role: 'user', content: 'hi' }];
const asGateway = (text: string) => text.replaceAll('local-alpha', 'alpha').replaceAll('local-beta', 'beta');

/** A request, the status it gets, and (answered) who answered after which providers were asked. */
const TABLE: [string, Record<string, unknown>, number, string | undefined, string[]][] = [
  ['the first provider fails: the second answers', { model: 'local/echo' }, 200, 'local/echo@local-beta', ['local/echo@local-alpha 502', 'local/echo@local-beta 200']],
  ['route "fallback" (the deprecated alias) falls back the same', { model: 'local/echo', route: 'fallback' }, 200, 'local/echo@local-beta', ['local/echo@local-alpha 502', 'local/echo@local-beta 200']],
  ['sort by price, a tie: the providers in their order', { model: 'local/echo', provider: { sort: 'price' } }, 200, 'local/echo@local-beta', ['local/echo@local-alpha 502', 'local/echo@local-beta 200']],
  ['provider.order asks the second first', { model: 'local/echo', provider: { order: ['local-beta'] } }, 200, 'local/echo@local-beta', ['local/echo@local-beta 200']],
  ['allow_fallbacks false: the one provider allowed fails', { model: 'local/echo', provider: { allow_fallbacks: false } }, 502, undefined, ['local/echo@local-alpha 502']],
  ['allow_fallbacks false still walks the models list', { models: ['local/echo', 'local/thinker'], provider: { allow_fallbacks: false } }, 200, 'local/thinker@local-beta', ['local/echo@local-alpha 502', 'local/thinker@local-beta 200']],
  ['a models list: each provider of the first model fails, then the next', { models: ['local/tools', 'local/echo'] }, 200, 'local/echo@local-beta', ['local/tools@local-alpha 502', 'local/echo@local-alpha 502', 'local/echo@local-beta 200']],
];

async function ask(e: Emulator, key: string, body: Record<string, unknown>) {
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled', 'x-openrouter-metadata': 'enabled' }, body: JSON.stringify({ ...body, messages }) });
  return { status: res.status, json: (await res.json()) as any };
}

/**
 * What both routings must say alike: who answered, the providers asked with their statuses, those passed over and
 * why (a failure's 502 carries them too, beside its error); a refusal's words after the failures'.
 */
function said(r: { status: number; json: any }) {
  const { attempts, endpoints, strategy, attempt } = r.json.openrouter_metadata;
  const passedOver = r.json.router_metadata.passed_over.map((p: { provider: string; model: string; reason: string }) => `${p.model}@${p.provider}: ${p.reason}`);
  const routing = { attempts: attempts.map((a: any) => `${a.model}@${a.provider} ${a.status}`), attempt, strategy, endpoints, passedOver };
  if (r.status !== 200) return { status: r.status, ...routing, refusal: String(r.json.error?.message).replace(/^.*?; passed over, no provider asked: /, '') };
  return { status: 200, answered: `${r.json.model}@${r.json.provider}`, ...routing };
}

describe.each(FLAVORS)('the fake models (%s) fall back past a failing provider as the gateway does', (flavor) => {
  it.each(TABLE)('%s', async (_name, body, status, answered, attempts) => {
    const fake = fakes.get(flavor)!;
    const own = said(await ask(fake, fake.store.firstKeys().apiKey, body));
    expect(own).toMatchObject({ status, attempts, ...(answered && { answered }) });
    const gateway = said(await ask(chain.gateway, chain.key, JSON.parse(asGateway(JSON.stringify(body))) as Record<string, unknown>));
    expect(JSON.parse(asGateway(JSON.stringify(own)))).toEqual(gateway);
  });

  it.each([
    ['a sort no one knows', { sort: 'bogus' }, 'provider.sort must be one of price, throughput, latency, exacto, got "bogus"'],
    ['a sort of another type', { sort: 42 }, 'provider.sort must be one of price, throughput, latency, exacto, got 42'],
    ['a partition no one knows', { sort: { by: 'price', partition: 'x' } }, 'provider.sort.partition must be one of model, none'],
  ])('%s is a 400 from both, nothing asked', async (_name, provider, words) => {
    const fake = fakes.get(flavor)!;
    const own = await ask(fake, fake.store.firstKeys().apiKey, { model: 'local/echo', provider });
    const gateway = await ask(chain.gateway, chain.key, { model: 'local/echo', provider });
    expect([own.status, own.json.error.message, gateway.status, gateway.json.error.message]).toEqual([400, words, 400, words]);
  });

  it('allow_fallbacks false: the provider not asked is named in the 502', async () => {
    const fake = fakes.get(flavor)!;
    const r = await ask(fake, fake.store.firstKeys().apiKey, { model: 'local/echo', provider: { allow_fallbacks: false } });
    expect(r.json.error.message).toBe('All providers for the requested models are unavailable: local-alpha: Injected fault: HTTP 502; passed over, no provider asked: local-beta: not the first provider (local-alpha), and provider.allow_fallbacks is false');
  });

  it('Responses falls back the same; a provider= fault of another kind than a status is a 400', async () => {
    const fake = fakes.get(flavor)!;
    const headers = { authorization: `Bearer ${fake.store.firstKeys().apiKey}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' };
    const res = await fetch(`${fake.apiRoot}/v1/responses`, { method: 'POST', headers, body: JSON.stringify({ model: 'local/echo', input: 'hi' }) });
    const json = (await res.json()) as any;
    expect(res.status, JSON.stringify(json)).toBe(200);
    expect(json.router_metadata.attempts.map((a: any) => [a.provider, a.ok])).toEqual([['local-alpha', false], ['local-beta', true]]);
    const cut = await fetch(`${fake.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'x-router-fault': 'cut,provider=local-beta' }, body: JSON.stringify({ model: 'local/echo', messages }) });
    expect(cut.status).toBe(400);
    expect(((await cut.json()) as any).error.message).toBe('provider=local-beta goes with a status fault only (e.g. 503,provider=local-beta)');
  });

  it("the CLI's routing note says the fallback", async () => {
    const fake = fakes.get(flavor)!;
    const env = { ROUTER_API_ROOT: fake.apiRoot, ROUTER_API_KEY: fake.store.firstKeys().apiKey, ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1', ROUTER_STATE_DIR: join(chain.dir, `cli-${flavor}`) };
    const r = await runInProcess(['chat', '--model', 'local/echo', '--router-metadata', '--no-stream', 'hi'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('router:'))).toEqual([
      'router: chat: local/echo -> local/echo via local-beta (attempt 2); failed: local-alpha (local-alpha: Injected fault: HTTP 502)',
      'router: attempts: local/echo via local-alpha (502), local/echo via local-beta (200)',
    ]);
    // --no-fallbacks: the one provider asked failed, the other is named as passed over (the 502's metadata).
    const refused = await runInProcess(['chat', '--model', 'local/echo', '--no-fallbacks', '--router-metadata', '--no-stream', 'hi'], { env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.split('\n').filter((l) => l.startsWith('router:'))).toEqual([
      'router: attempt 1: local/echo via local-alpha failed: local-alpha: Injected fault: HTTP 502',
      'router: passed over: local/echo via local-beta: local-beta: not the first provider (local-alpha), and provider.allow_fallbacks is false',
    ]);
  });
});
