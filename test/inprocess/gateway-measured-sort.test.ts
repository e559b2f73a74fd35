import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { answersHi } from '../support/upstreams.js';

// The gateway refused `provider.sort: "latency" | "throughput"` and the preferred cut-offs with a 400 (it measured
// nothing). Now it measures its own attempts (routing/measures.ts) and ranks by them. One upstream is made clearly
// slower (150 ms to its head, or 15 ms a token: at most ~75 tokens a second); what is asserted is which provider
// answered, never a time, and a cut-off sits well clear of both sides (a loaded machine slows the fast one too).
const SLOW_HEAD_MS = 150;
const DRIP_MS = 15;
let flakyFails = false;

const slow = (req: IncomingMessage, res: ServerResponse) => void setTimeout(() => answersHi(req, res), SLOW_HEAD_MS);
/** A stream of 10 tokens with its usage: at once (`gapMs` 0), or one every `gapMs`. */
const tokens = (gapMs: number) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: object, extra: object = {}) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  let i = 0;
  const next = (): void => {
    if (i === 10) return void res.end(`${chunk({}, { usage: { prompt_tokens: 2, completion_tokens: 10, total_tokens: 12 } })}data: [DONE]\n\n`);
    res.write(chunk({ content: `t${i++} ` }));
    if (gapMs) setTimeout(next, gapMs);
    else next();
  };
  next();
};
/** A whole Responses answer, after `ms`. */
const responds = (ms: number) => (_req: IncomingMessage, res: ServerResponse) =>
  void setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const output = [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi', annotations: [] }] }];
    res.end(JSON.stringify({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'm', output, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }));
  }, ms);
const flaky = (req: IncomingMessage, res: ServerResponse) => {
  if (!flakyFails) return answersHi(req, res);
  res.writeHead(503, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: 503, message: 'flaky is down' } }));
};

const g = gatewayForAll({
  prefix: 'router-measured-',
  upstreams: { slow, fast: answersHi, drip: tokens(DRIP_MS), burst: tokens(0), flaky, slowResponses: responds(SLOW_HEAD_MS), fastResponses: responds(0) },
  providers: (u) => `
providers:
  - { name: slow, base_url: "${u.slow}", models: { test/lat: m, test/fb: m, test/slowonly: m, test/cut: m } }
  - { name: fast, base_url: "${u.fast}", models: { test/lat: m, test/fastonly: m, test/cut: m } }
  - { name: drip, base_url: "${u.drip}", models: { test/rate: m } }
  - { name: burst, base_url: "${u.burst}", models: { test/rate: m } }
  - { name: flaky, base_url: "${u.flaky}", models: { test/fb: m } }
  - { name: slowr, base_url: "${u.slowResponses}", responses: true, models: { test/resp: m } }
  - { name: fastr, base_url: "${u.fastResponses}", responses: true, models: { test/resp: m } }
`,
});

async function chat(body: Record<string, unknown>, path = '/v1/chat/completions') {
  const res = await fetch(`${g.gateway.apiRoot}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.apiKey}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' },
    body: JSON.stringify({ ...(path.endsWith('/responses') ? { input: 'hi' } : { messages: [{ role: 'user', content: 'hi' }] }), ...body }),
  });
  const text = await res.text();
  if (body.stream !== true) return { status: res.status, json: JSON.parse(text) as any };
  // A stream: its first chunk names the provider and carries router_metadata.
  const first = JSON.parse(text.split('\n').find((l) => l.startsWith('data: {'))!.slice(6)) as any;
  return { status: res.status, json: first };
}
const answeredBy = async (body: Record<string, unknown>) => {
  const r = await chat(body);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.provider as string;
};

describe('provider.sort by what the gateway measured', () => {
  it('latency: an unmeasured provider first (file order), then the one with the lower p50; router_metadata shows the measures', async () => {
    const ask = { model: 'test/lat', provider: { sort: 'latency' } };
    // Neither measured: the file's order. Then slow is measured, fast not: fast is tried to be measured. Then both are.
    expect([await answeredBy(ask), await answeredBy(ask), await answeredBy(ask), await answeredBy(ask)]).toEqual(['slow', 'fast', 'fast', 'fast']);
    const meta = (await chat({ ...ask, provider: { sort: { by: 'latency', partition: 'model' } } })).json.router_metadata;
    const [first, second] = meta.endpoints.available;
    expect([first.provider, second.provider]).toEqual(['fast', 'slow']);
    expect(first.latency.p50).toBeLessThan(second.latency.p50);
    expect(Object.keys(second.latency)).toEqual(['p50', 'p75', 'p90', 'p99']);
    expect(second.throughput.p50).toBeGreaterThan(0);
  });

  it('throughput: the provider with the higher p50 tokens a second after the first token', async () => {
    const ask = { model: 'test/rate', stream: true, provider: { sort: 'throughput' } };
    expect([await answeredBy(ask), await answeredBy(ask), await answeredBy(ask), await answeredBy(ask)]).toEqual(['drip', 'burst', 'burst', 'burst']);
    // Without the sort: the file's order, the slower stream first.
    expect(await answeredBy({ model: 'test/rate', stream: true })).toBe('drip');
  });

  it('Responses are measured and sorted as chat is', async () => {
    const ask = { model: 'test/resp', provider: { sort: 'latency' } };
    const answered = async () => (await chat(ask, '/v1/responses')).json.router_metadata.attempts.find((a: { ok: boolean }) => a.ok).provider as string;
    expect([await answered(), await answered(), await answered()]).toEqual(['slowr', 'fastr', 'fastr']);
  });

  it('preferred cut-offs deprioritise the providers that miss them, never drop them', async () => {
    for (let i = 0; i < 2; i++) await answeredBy({ model: 'test/cut', provider: { order: ['slow', 'fast'] } });
    await answeredBy({ model: 'test/cut', provider: { order: ['fast'] } });
    expect(await answeredBy({ model: 'test/cut' })).toBe('slow');
    expect(await answeredBy({ model: 'test/cut', provider: { preferred_max_latency: 0.1 } })).toBe('fast');
    expect(await answeredBy({ model: 'test/cut', provider: { preferred_max_latency: { p90: 0.1, p99: null } } })).toBe('fast');
    // Met by both: the file's order stands.
    expect(await answeredBy({ model: 'test/cut', provider: { preferred_max_latency: 60 } })).toBe('slow');
    // Missed by the only provider left: it still answers.
    expect(await answeredBy({ model: 'test/cut', provider: { only: ['slow'], preferred_max_latency: 0.1 } })).toBe('slow');
    expect(await answeredBy({ model: 'test/rate', stream: true, provider: { preferred_min_throughput: { p50: 200 } } })).toBe('burst');
  });

  it('a models list: partition "none" sorts every model together, and a cut-off lets a fallback model that meets it go first', async () => {
    await answeredBy({ model: 'test/slowonly' });
    await answeredBy({ model: 'test/fastonly' });
    const list = { model: 'test/slowonly', models: ['test/fastonly'] };
    expect((await chat({ ...list, provider: { sort: 'latency' } })).json.model).toBe('test/slowonly');
    expect((await chat({ ...list, provider: { sort: { by: 'latency', partition: 'none' } } })).json.model).toBe('test/fastonly');
    expect((await chat({ ...list, provider: { preferred_max_latency: 0.1 } })).json.model).toBe('test/fastonly');
  });

  it('the fastest failing: the next answers; once most of its window failed, it is asked after the others', async () => {
    const ask = { model: 'test/fb', provider: { sort: 'latency' } };
    expect([await answeredBy(ask), await answeredBy(ask), await answeredBy(ask)]).toEqual(['slow', 'flaky', 'flaky']);
    flakyFails = true;
    const failedOver = (await chat(ask)).json;
    expect(failedOver.provider).toBe('slow');
    expect(failedOver.router_metadata.attempts.map((a: { provider: string; ok: boolean }) => [a.provider, a.ok])).toEqual([['flaky', false], ['slow', true]]);
    // Two answers and one, then two failures: its p50 still an answer's, it is asked first (and fails) twice more.
    for (let i = 0; i < 2; i++) expect((await chat(ask)).json.router_metadata.attempts.map((a: { provider: string }) => a.provider)).toEqual(['flaky', 'slow']);
    // Two answers and three failures: its p50 is a failure's, slow is asked alone.
    const meta = (await chat(ask)).json.router_metadata;
    expect(meta.attempts.map((a: { provider: string }) => a.provider)).toEqual(['slow']);
    expect(meta.endpoints.available.map((e: { provider: string }) => e.provider)).toEqual(['slow', 'flaky']);
    expect(meta.endpoints.available[1].latency.p50).toBeNull(); // a failure counts as no answer at all
  });

  it('"exacto" stays a 400, and a cut-off of the wrong shape is one, from the gateway and the fake models alike', async () => {
    const exacto = await chat({ model: 'test/lat', provider: { sort: 'exacto' } });
    expect(exacto.status).toBe(400);
    expect(exacto.json.error.message).toMatch(/provider.sort "exacto": this gateway cannot tell which providers are exact/);
    for (const model of ['test/lat', 'local/echo']) {
      for (const [provider, words] of [
        [{ preferred_max_latency: 'fast' }, 'provider.preferred_max_latency must be a number'],
        [{ preferred_min_throughput: { p95: 10 } }, 'provider.preferred_min_throughput.p95 is not a percentile (p50, p75, p90, p99)'],
        [{ preferred_max_latency: { p50: '1' } }, 'provider.preferred_max_latency.p50 must be a number'],
      ] as const) {
        const r = await chat({ model, provider });
        expect(r.status, `${model} ${JSON.stringify(provider)}`).toBe(400);
        expect(r.json.error.message).toContain(words);
      }
    }
  });

  it('the fake models take the sorts and cut-offs as the OpenAPI names them, keeping their providers order', async () => {
    const plain = (await chat({ model: 'local/echo' })).json.provider;
    for (const provider of [{ sort: 'latency' }, { sort: { by: 'throughput', partition: 'none' } }, { sort: 'exacto' }, { preferred_max_latency: 0.001, preferred_min_throughput: { p90: 1e9 } }]) {
      const r = await chat({ model: 'local/echo', provider });
      expect(r.status, JSON.stringify(provider)).toBe(200);
      expect(r.json.provider).toBe(plain);
    }
  });
});
