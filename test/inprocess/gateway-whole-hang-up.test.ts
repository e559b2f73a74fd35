import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { round } from '../../src/emulator/models/models.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// A caller who hangs up on a request that is not streamed, while the upstream (another `router serve`, its answer
// slowed by a fault) works on it: the upstream answers and bills the operator all the same, and the service bills
// such a request in full. The gateway reads the answer to its end, charges its usage and keeps its generation.
// Before: the upstream was let go mid-answer (it billed the operator anyway), the hold given back, the caller charged nothing.
const PROMPT = 1e-6;
const COMPLETION = 2e-6;
let chain: GatewayChain;
let upstream: Emulator;
let gateway: Emulator;
let first: LocalUpstream;
/** The answers `first` holds back, until a test lets them go (a 503 each). */
const heldBack: ServerResponse[] = [];

beforeAll(async () => {
  first = await localUpstream((_req, res) => heldBack.push(res));
  const yaml = (root: string) => `
providers:
  - { name: first, base_url: "${first.baseUrl}", models: { test/after-first: m }, prices: { test/after-first: { prompt: ${PROMPT}, completion: ${COMPLETION} } } }
  - name: up
    base_url: ${root}/v1
    api_key_env: UP_KEY
    responses: true
    models: { test/priced: local/echo, test/unpriced: local/echo, test/after-first: local/echo }
    embedding_models: { test/emb: local/embed }
    prices: { test/priced: { prompt: ${PROMPT}, completion: ${COMPLETION} }, test/after-first: { prompt: ${PROMPT}, completion: ${COMPLETION} }, test/emb: { prompt: ${PROMPT} } }
`;
  chain = await startGatewayChain('gateway-whole-hang-up', yaml, { locals: [first] });
  ({ upstream, gateway } = chain);
});

afterAll(() => chain?.close());

/** What `key`'s workspace has spent of its credits. */
const spent = async (e: Emulator, key: string) => {
  const ws = e.store.findKey(key)!.workspace;
  return e.store.workspace(ws).total_usage;
};

/** The upstream's requests to `path` so far. */
const upstreamAsked = (path: string) => upstream.requestLog.filter((r) => r.method === 'POST' && r.path === path).length;

/** The generations the gateway keeps for workspace `ws`, as `GET /v1/generation` gives them. */
async function generationsOf(ws: string, key: string): Promise<Record<string, unknown>[]> {
  const ids = [...gateway.store.allGenerations()].filter((g) => g.workspace === ws).map((g) => g.data.id as string);
  return Promise.all(
    ids.map(async (id) => {
      const res = await fetch(`${gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: Record<string, unknown> }).data;
    }),
  );
}

/** Resolves once the gateway has heard its next request's caller go (this listener runs before the gateway's own, in the same event). */
const gatewayHearsHangUp = () => new Promise<void>((resolve) => gateway.server.once('request', (_req, res: ServerResponse) => res.once('close', resolve)));

/** Posts `body` to the gateway's `path` as workspace `ws` and hangs up once the upstream has it (its answer slowed); the caller's key. */
async function hangUpMidWait(ws: string, path: string, body: unknown): Promise<string> {
  const { apiKey } = gateway.store.createWorkspace(ws, 1);
  const faults = await fetch(`${upstream.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${upstream.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: [`slow,delay_ms=1500,times=1,path=${path}`] }) });
  expect(faults.status).toBe(200);
  const before = upstreamAsked(path);
  const heard = gatewayHearsHangUp();
  const caller = new AbortController();
  const answer = fetch(`${gateway.apiRoot}${path}`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await vi.waitFor(() => expect(upstreamAsked(path)).toBe(before + 1), SETTLE);
  caller.abort();
  await expect(answer).rejects.toThrow();
  await heard;
  return apiKey;
}

describe('a caller who hangs up on a whole (not streamed) gateway answer', () => {
  it.each([
    ['chat, priced and bounded', '/v1/chat/completions', { model: 'test/priced', max_tokens: 50, messages: [{ role: 'user', content: 'one two three four' }] }],
    ['Responses, priced and bounded', '/v1/responses', { model: 'test/priced', max_output_tokens: 50, input: 'one two three four' }],
    ['embeddings', '/v1/embeddings', { model: 'test/emb', input: 'one two three four' }],
  ])('%s: charged the answer read to its end, its generation kept', async (name, path, body) => {
    const ws = `whole-${name.split(',')[0]}`;
    const upBefore = await spent(upstream, chain.upKey);
    const key = await hangUpMidWait(ws, path, body);
    // The upstream answered (and billed the operator) after the caller went.
    await vi.waitFor(async () => expect(await spent(upstream, chain.upKey)).toBeGreaterThan(upBefore), SETTLE);
    await vi.waitFor(async () => expect(await generationsOf(ws, key)).toHaveLength(1), SETTLE);
    const [g] = await generationsOf(ws, key);
    const owed = round(round(Number(g!.tokens_prompt) * PROMPT) + round(Number(g!.tokens_completion) * COMPLETION));
    expect(g).toMatchObject({ cancelled: false, streamed: false, total_cost: owed });
    expect(owed).toBeGreaterThan(0);
    // Its credits: the hold settled at the answer's cost, once.
    expect(await spent(gateway, key)).toBeCloseTo(owed, 10);
  });

  it('unpriced: charged what the upstream billed the operator for it', async () => {
    const upBefore = await spent(upstream, chain.upKey);
    const key = await hangUpMidWait('whole-unpriced', '/v1/chat/completions', { model: 'test/unpriced', messages: [{ role: 'user', content: 'five six seven' }] });
    await vi.waitFor(async () => expect(await generationsOf('whole-unpriced', key)).toHaveLength(1), SETTLE);
    const billed = round((await spent(upstream, chain.upKey)) - upBefore);
    expect(billed).toBeGreaterThan(0);
    expect(await spent(gateway, key)).toBeCloseTo(billed, 10);
    expect((await generationsOf('whole-unpriced', key))[0]).toMatchObject({ total_cost: billed, cancelled: false });
  });

  it('gone before the upstream is asked: nothing sent, nothing charged, the hold given back', async () => {
    const { apiKey } = gateway.store.createWorkspace('whole-early', 1);
    const before = upstreamAsked('/v1/chat/completions');
    const heard = gatewayHearsHangUp();
    const caller = new AbortController();
    const answer = fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/after-first', max_tokens: 50, messages: [{ role: 'user', content: 'eight' }] }) });
    // The first provider has it; the hold is taken.
    await vi.waitFor(() => expect(heldBack).toHaveLength(1), SETTLE);
    expect(await spent(gateway, apiKey)).toBeGreaterThan(0);
    caller.abort();
    await expect(answer).rejects.toThrow();
    await heard;
    // The first provider fails after the caller went: the next one (the `router serve`) is not asked for nobody.
    const res = heldBack.pop()!;
    res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"busy"}}');
    await vi.waitFor(async () => expect(await spent(gateway, apiKey)).toBe(0), SETTLE);
    expect(upstreamAsked('/v1/chat/completions')).toBe(before);
    expect(await generationsOf('whole-early', apiKey)).toHaveLength(0);
  });
});
