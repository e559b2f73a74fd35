import { afterAll, describe, expect, it, vi } from 'vitest';
import { round } from '../../src/emulator/models/models.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { SETTLE } from '../support/until.js';

// Requests that name no max_tokens, or go to a provider without prices, running together on credits
// for a few, never take the balance below zero: a model with `max_completion_tokens` holds that
// bound (402 for those that do not fit, as a request with max_tokens); with nothing to bound the
// cost, each is charged at most what is left. Before, eight of them took 1 credit to -2.2.
const PROMPT = 1e-6;
const COMPLETION = 1e-4;
const MAX = 1_000;
const UPSTREAM_COST = 0.4;
/** test/priced's completion price: its answer of 20 tokens costs about 0.4 too. */
const DEAR = 0.02;
const USAGE = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };
/** Requests the upstream holds unanswered until `release()`. */
let waiting: (() => void)[] = [];
const release = () => {
  for (const answer of waiting.splice(0)) answer();
};

const gw = gatewayForAll({
  prefix: 'router-unbounded-',
  upstreams: { up: (_req, res, body) => {
    waiting.push(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `gen-${Math.random().toString(36).slice(2)}`, object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { ...USAGE, cost: UPSTREAM_COST } }));
    });
  } },
  providers: ({ up }) => `providers:
  - name: up
    base_url: "${up}"
    models: { test/limited: m, test/priced: m, test/unpriced: m }
    prices: { test/limited: { prompt: ${PROMPT}, completion: ${COMPLETION} }, test/priced: { prompt: ${PROMPT}, completion: ${DEAR} } }
    max_completion_tokens: { test/limited: ${MAX} }
`,
});
afterAll(() => {
  release();
});

const body = (model: string) => ({ model, messages: [{ role: 'user', content: 'no max_tokens here' }] });

/** Sends `n` requests at once as a fresh workspace with `credits`; their statuses once all ended. */
async function together(ws: string, credits: number, model: string, n: number, reaching: number) {
  waiting = [];
  const { apiKey } = gw.gateway.store.createWorkspace(ws, credits);
  const statuses: number[] = [];
  const answers = Array.from({ length: n }, () =>
    fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body(model)) }).then(async (res) => {
      statuses.push(res.status);
      return res.text();
    }),
  );
  // The upstream answers none until every request was either sent to it or refused.
  // Within the test's bound, not 30 s: a time a loaded machine can pass.
  await vi.waitFor(() => expect(waiting.length + statuses.length).toBe(n), SETTLE);
  expect(waiting.length).toBe(reaching);
  release();
  const ids = (await Promise.all(answers)).map((text) => (JSON.parse(text) as { id?: string }).id).filter((id): id is string => !!id);
  return { statuses: statuses.sort(), ids, apiKey };
}

describe('requests with no bound of their own, many at once on little credit', () => {
  it('a model with max_completion_tokens: each holds its bound, those that do not fit are 402', async () => {
    const bound = round(round((Buffer.byteLength(JSON.stringify(body('test/limited'))) + 16) * PROMPT) + round(MAX * COMPLETION));
    const credits = 0.35;
    const fit = Math.floor(credits / bound);
    expect(fit).toBe(3);
    const { statuses } = await together('limited', credits, 'test/limited', 8, fit);
    expect(statuses).toEqual([...Array(fit).fill(200), ...Array(8 - fit).fill(402)]);
    const cost = round(round(USAGE.prompt_tokens * PROMPT) + round(USAGE.completion_tokens * COMPLETION));
    expect(gw.gateway.store.balance('limited')).toBeCloseTo(credits - fit * cost, 10);
  });

  it.each(['test/unpriced', 'test/priced'])('%s, nothing to bound it: all are answered, each charged at most what is left; the balance ends at zero, not below', async (model) => {
    const ws = model.replace('/', '-');
    const { statuses, ids, apiKey } = await together(ws, 1, model, 8, 8);
    expect(statuses).toEqual(Array(8).fill(200));
    const perAnswer = model === 'test/unpriced' ? UPSTREAM_COST : round(round(USAGE.prompt_tokens * PROMPT) + round(USAGE.completion_tokens * DEAR));
    expect(8 * perAnswer).toBeGreaterThan(1);
    expect(gw.gateway.store.balance(ws)).toBe(0);
    // Each generation says what it was charged: together, the one credit there was.
    const charged = await Promise.all(ids.map(async (id) => {
      const got = await fetch(`${gw.gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
      return ((await got.json()) as { data: { total_cost: number } }).data.total_cost;
    }));
    expect(charged).toHaveLength(8);
    expect(round(charged.reduce((a, b) => a + b, 0))).toBe(1);
    // Spent: the next is refused before any upstream is asked.
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body(model)) });
    expect(res.status).toBe(402);
  });

  it('the model list says a model\'s max_completion_tokens', async () => {
    const res = await fetch(`${gw.gateway.apiRoot}/v1/models`, { headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().apiKey}` } });
    const models = ((await res.json()) as { data: { id: string; top_provider: { max_completion_tokens: number | null } }[] }).data;
    expect(models.find((m) => m.id === 'test/limited')!.top_provider.max_completion_tokens).toBe(MAX);
    expect(models.find((m) => m.id === 'test/priced')!.top_provider.max_completion_tokens).toBeNull();
  });

  it('max_completion_tokens in a providers file: a whole number of tokens, for a chat model of that provider', () => {
    const file = (limits: string) => `providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { test/c: c }, embedding_models: { test/e: e }, max_completion_tokens: ${limits} }\n`;
    expect(parseProviders(file('{ test/c: 8192 }'), {}).providers[0]!.models.find((m) => m.id === 'test/c')!.maxCompletionTokens).toBe(8192);
    expect(() => parseProviders(file('{ test/c: 0 }'), {})).toThrow('provider up: max_completion_tokens.test/c must be a whole number of tokens, 1 or more');
    expect(() => parseProviders(file('{ test/c: 1.5 }'), {})).toThrow(/whole number/);
    expect(() => parseProviders(file('{ test/e: 10 }'), {})).toThrow('provider up: max_completion_tokens.test/e names a model that is not among its chat models');
    expect(() => parseProviders(file('8192'), {})).toThrow(/must map chat model ids/);
  });
});
