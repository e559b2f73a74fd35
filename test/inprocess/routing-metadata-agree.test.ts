import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FLAVORS, startEmulator, type Emulator, type Flavor } from '../../src/emulator/server.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { runInProcess } from '../support/inprocess.js';
import { testGateway } from '../support/upstreams.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

// `router serve`'s own routing said its chain otherwise than the gateway: an id of `models` that names no
// model was an attempt (`provider: "none", status: 400`), a model whose providers the request's rules all
// passed over a 503 attempt, `passed_over` not there (so the CLI's "passed over, not asked" line never
// showed), `endpoints` only the chosen model's. The same chains go to the fake models and to a gateway over
// a fake upstream whose providers and prices are the fake models' own: the metadata must agree.
let chain: GatewayChain;
const fakes = new Map<Flavor, Emulator>();

const ECHO_LOREM = 'local/echo: { prompt: 0.000001, completion: 0.000002 }, local/lorem: { prompt: 0.0000005, completion: 0.0000015 }';

beforeAll(async () => {
  // The fake models' providers (named apart: a gateway keeps their names for its own fake models), each serving
  // the same ids at the same prices from the upstream `router serve`.
  chain = await startGatewayChain('routing-metadata-agree', (root) => `
local_models: false
providers:
  - { name: alpha, base_url: "${root}/v1", api_key_env: UP_KEY, models: { local/echo: local/echo, local/lorem: local/lorem }, prices: { ${ECHO_LOREM} } }
  - { name: beta, base_url: "${root}/v1", api_key_env: UP_KEY, models: { local/echo: local/echo, local/lorem: local/lorem, local/unavailable: local/unavailable, local/thinker: local/thinker }, prices: { ${ECHO_LOREM}, local/thinker: { prompt: 0.000002, completion: 0.000004 }, local/unavailable: { prompt: 0.000001, completion: 0.000001 } } }
`);
  // The fake models answered by a `router serve` of each flavour (the upstream is the spec's).
  for (const flavor of FLAVORS) fakes.set(flavor, flavor === 'spec' ? chain.upstream : await startEmulator({ stateDir: join(chain.dir, flavor), port: 0, flavor }));
});
afterAll(async () => {
  for (const [flavor, e] of fakes) if (flavor !== 'spec') await e.close();
  await chain?.close();
});

const messages = [{ role: 'user', content: 'hi' }];
const CHAINS: [string, Record<string, unknown>][] = [
  ['an unknown id first', { model: 'nosuch/model', models: ['local/echo'] }],
  ['a malformed id first', { model: 'no slash', models: ['local/echo'] }],
  ['a down model first', { models: ['local/unavailable', 'local/echo'] }],
  ['down, unknown, then the answer', { models: ['local/unavailable', 'nosuch/model', 'local/echo'] }],
  ['an unknown id after the model that answers', { models: ['local/echo', 'nosuch/model'] }],
  ['max_price rules out every provider of the first model', { models: ['local/echo', 'local/lorem'], provider: { max_price: { prompt: 0.6 } } }],
  ['provider.only rules out the first model', { models: ['local/thinker', 'local/echo'], provider: { only: ['local-alpha'] } }],
  ['provider.ignore leaves the second provider', { model: 'local/echo', provider: { ignore: ['local-alpha'] } }],
  ['provider.order', { model: 'local/lorem', provider: { order: ['local-beta'] } }],
  ['a fallback that answers third after an unknown id and a ruled-out model', { models: ['nosuch/x', 'local/echo', 'local/lorem'], provider: { max_price: { prompt: 0.6 } } }],
  ['direct', { model: 'local/lorem' }],
  ['provider.only leaves the second provider', { model: 'local/echo', provider: { only: ['local-beta'] } }],
  ['allow_fallbacks false keeps the first provider', { model: 'local/echo', provider: { allow_fallbacks: false } }],
  ['allow_fallbacks false keeps those provider.order names', { model: 'local/lorem', provider: { order: ['local-beta'], allow_fallbacks: false } }],
  ['provider.ignore on each model of a fallback chain', { models: ['local/thinker', 'local/lorem'], provider: { ignore: ['local-beta'] } }],
];

/** The providers a request itself leaves out (`only`, `ignore`, `allow_fallbacks: false`): each named with why, and counted as an endpoint. */
const NAMED_OUT: [string, Record<string, unknown>, { provider: string; model: string; reason: string }[], number][] = [
  ['provider.only', { model: 'local/echo', provider: { only: ['local-beta'] } }, [{ provider: 'local-alpha', model: 'local/echo', reason: 'local-alpha: not named in provider.only' }], 2],
  ['provider.ignore', { model: 'local/echo', provider: { ignore: ['local-alpha'] } }, [{ provider: 'local-alpha', model: 'local/echo', reason: 'local-alpha: named in provider.ignore' }], 2],
  ['allow_fallbacks false', { model: 'local/echo', provider: { allow_fallbacks: false } }, [{ provider: 'local-beta', model: 'local/echo', reason: 'local-beta: not the first provider (local-alpha), and provider.allow_fallbacks is false' }], 2],
  ['allow_fallbacks false with order', { model: 'local/lorem', provider: { order: ['local-beta'], allow_fallbacks: false } }, [{ provider: 'local-alpha', model: 'local/lorem', reason: 'local-alpha: not in provider.order, and provider.allow_fallbacks is false' }], 2],
  ['provider.ignore on a fallback chain', { models: ['local/thinker', 'local/lorem'], provider: { ignore: ['local-beta'] } }, [
    { provider: 'local-beta', model: 'local/thinker', reason: 'local-beta: named in provider.ignore' },
    { provider: 'local-beta', model: 'local/lorem', reason: 'local-beta: named in provider.ignore' },
  ], 3],
];

/** The fake models' provider slugs as the gateway's providers file names them. */
const asGateway = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('local-alpha', 'alpha').replaceAll('local-beta', 'beta')) as T;

async function ask(e: Emulator, key: string, body: Record<string, unknown>) {
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled', 'x-openrouter-metadata': 'enabled' }, body: JSON.stringify({ ...body, messages }) });
  const json = (await res.json()) as any;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

const withoutFailures = (line: string) => line.replace(/; failed: .*?(?=; passed over, not asked|$)/, '; failed: …');

/** What both shapes share: the failures' own words (an upstream's, a fake model's) and the time taken left out. */
function shared(answer: any) {
  const { generation_time: _t, attempts, summary, ...router } = answer.router_metadata;
  return {
    router: { ...router, attempts: attempts.map(({ error: _e, ...a }: { error?: string }) => a), summary: withoutFailures(summary) },
    openrouter: { ...answer.openrouter_metadata, summary: withoutFailures(answer.openrouter_metadata.summary) },
    answered: [answer.model, answer.provider],
  };
}

describe.each(FLAVORS)('the fake models (%s) route a chain as the gateway does', (flavor) => {
  let fake: Emulator;
  beforeAll(() => {
    fake = fakes.get(flavor)!;
  });

  it.each(CHAINS)('%s: the same attempts, passed_over, endpoints, strategy and summary', async (_name, body) => {
    const own = shared(await ask(fake, fake.store.firstKeys().apiKey, body));
    const gateway = shared(await ask(chain.gateway, chain.key, asGateway(body)));
    expect(asGateway(own)).toEqual(gateway);
    // Each provider asked is an attempt, and only those: never an id that names no model or a provider a rule passed over.
    expect(own.openrouter.attempts.every((a: { provider: string; status: number }) => a.provider !== 'none' && a.status !== 400 && a.status !== 404)).toBe(true);
    expect(own.router.attempt).toBe(own.openrouter.attempts.length);
  });

  it('names the id and the providers passed over, and counts the latter as endpoints', async () => {
    const own = shared(await ask(fake, fake.store.firstKeys().apiKey, CHAINS[9]![1]));
    expect(own.router).toMatchObject({
      attempt: 1,
      strategy: 'fallback',
      attempts: [{ provider: 'local-alpha', model: 'local/lorem', ok: true }],
      passed_over: [
        { provider: 'none', model: 'nosuch/x', reason: 'nosuch/x is not a valid model ID', status: 400 },
        { provider: 'local-alpha', model: 'local/echo', reason: 'local-alpha: local/echo costs 1 USD per million prompt tokens, over provider.max_price.prompt 0.6', status: 404 },
        { provider: 'local-beta', model: 'local/echo', reason: 'local-beta: local/echo costs 1 USD per million prompt tokens, over provider.max_price.prompt 0.6', status: 404 },
      ],
      endpoints: { available: [{ model: 'local/lorem', provider: 'local-alpha', selected: true }, { model: 'local/lorem', provider: 'local-beta', selected: false }], total: 4 },
    });
  });

  it.each(NAMED_OUT)('names each provider %s leaves out in passed_over, and endpoints.total counts it', async (_name, body, passedOver, total) => {
    const own = shared(await ask(fake, fake.store.firstKeys().apiKey, body));
    expect(own.router.passed_over).toEqual(passedOver.map((p) => ({ ...p, status: 404 })));
    expect(own.router.endpoints.total).toBe(total);
    expect(own.openrouter.endpoints.total).toBe(total);
    expect(own.router.endpoints.available.length).toBe(total - passedOver.length);
    expect(own.router.summary).toContain(`passed over, not asked: ${passedOver.map((p) => `${p.provider} (${p.reason})`).join(', ')}`);
  });

  it("the CLI's routing note says the same lines for both, as docs/gateway.md shows them", async () => {
    const env = (e: Emulator, key: string) => ({ ROUTER_API_ROOT: e.apiRoot, ROUTER_API_KEY: key, ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_NO_LOG: '1', ROUTER_STATE_DIR: join(chain.dir, 'cli-state') });
    const routed = async (e: Emulator, key: string, args: string[]) => {
      const r = await runInProcess(args, { env: env(e, key) });
      expect(r.code, r.stderr).toBe(0);
      return [r.stdout.trimEnd(), ...r.stderr.split('\n').filter((l) => l.startsWith('router:'))];
    };
    const own = await routed(fake, fake.store.firstKeys().apiKey, ['chat', '--model', 'local/unavailable', '--models', 'nosuch/model,local/echo', '--router-metadata', '--no-stream', 'hi']);
    expect(own.map(withoutFailures)).toEqual([
      'hi',
      'router: chat: local/unavailable -> local/echo via local-alpha (attempt 2); failed: …; passed over, not asked: none (nosuch/model is not a valid model ID)',
      'router: attempts: local/unavailable via local-beta (502), local/echo via local-alpha (200)',
      'router: passed over, not asked: nosuch/model via none (400)',
    ]);
    expect((await routed(chain.gateway, chain.key, ['chat', '--model', 'local/unavailable', '--models', 'nosuch/model,local/echo', '--router-metadata', '--no-stream', 'hi'])).map(withoutFailures)).toEqual(asGateway(own.map(withoutFailures)));
    // docs/gateway.md's example, as written: from the fake models, and from a gateway serving them beside an upstream.
    const [command, ...shown] = /On an answer, `--router-metadata`[\s\S]*?```text\n\$ router (.*)\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'docs', 'gateway.md'), 'utf8'))!.slice(1);
    const lines = shown[0]!.trimEnd().split('\n');
    expect(await routed(fake, fake.store.firstKeys().apiKey, command!.split(' '))).toEqual(lines);
    const mixed = await testGateway('providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { test/m: m } }\n', 'agree-mixed');
    try {
      expect(await routed(mixed.gateway, mixed.gateway.store.firstKeys().apiKey, command!.split(' '))).toEqual(lines);
    } finally {
      await mixed.close();
    }
  });
});
