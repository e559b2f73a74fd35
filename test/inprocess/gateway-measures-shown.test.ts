import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAVORS, startEmulator } from '../../src/emulator/server.js';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { answersHi } from '../support/upstreams.js';
import { answerValidator, violations } from '../conformance/openapi-fixtures.js';

// What the gateway measures of its providers (routing/measures.ts) was used to rank them but the endpoints
// list still said null; and a burst sorted by latency all went to a provider no one had timed yet. Which
// provider answered is asserted, and a lower bound by construction (a head held 150 ms), never a time.
const SLOW_HEAD_MS = 150;
const slow = (req: IncomingMessage, res: ServerResponse) => void setTimeout(() => answersHi(req, res), SLOW_HEAD_MS);

/** An upstream that holds every answer until `release()`; `asked` counts its requests, `onAsked` hears each. */
function held() {
  const waiting: (() => void)[] = [];
  const h = {
    asked: 0,
    onAsked: () => {},
    released: false,
    answer: (req: IncomingMessage, res: ServerResponse) => {
      h.asked++;
      h.onAsked();
      if (h.released) return answersHi(req, res);
      waiting.push(() => answersHi(req, res));
    },
    release: () => {
      h.released = true;
      for (const answer of waiting.splice(0)) answer();
    },
  };
  return h;
}
const herds = { latency: held(), throughput: held() };
let wobbled = false;
/** A 503 the first time, then answers. */
const wobbly = (req: IncomingMessage, res: ServerResponse) => {
  if (wobbled) return answersHi(req, res);
  wobbled = true;
  res.writeHead(503, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: 503, message: 'wobbly is down' } }));
};

const g = gatewayForAll({
  prefix: 'router-measures-shown-',
  upstreams: { slow, fast: answersHi, known: answersHi, freshL: herds.latency.answer, freshT: herds.throughput.answer, wobbly },
  providers: (u) => `
providers:
  - { name: slow, base_url: "${u.slow}", models: { test/shown: m } }
  - { name: fast, base_url: "${u.fast}", models: { test/shown: m, test/wobble: m } }
  - { name: wobbly, base_url: "${u.wobbly}", models: { test/wobble: m } }
  - { name: fresh-latency, base_url: "${u.freshL}", models: { test/herd-latency: m } }
  - { name: fresh-throughput, base_url: "${u.freshT}", models: { test/herd-throughput: m } }
  - { name: known, base_url: "${u.known}", models: { test/herd-latency: m, test/herd-throughput: m } }
`,
});

async function post(body: Record<string, unknown>) {
  const res = await fetch(`${g.gateway.apiRoot}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
  const json = (await res.json()) as any;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.provider as string;
}
async function endpointsOf(id: string) {
  const res = await fetch(`${g.gateway.apiRoot}/v1/models/${id}/endpoints`, { headers: { authorization: `Bearer ${g.apiKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as any;
}

describe('the endpoints list shows what the gateway measured', () => {
  it('latency in milliseconds and throughput as PercentileStats for a measured provider, null for one never asked', async () => {
    for (let i = 0; i < 3; i++) expect(await post({ model: 'test/shown', provider: { only: ['slow'] } })).toBe('slow');
    const body = await endpointsOf('test/shown');
    const [slowOne, fastOne] = body.data.endpoints;
    expect([slowOne.provider_name, fastOne.provider_name]).toEqual(['slow', 'fast']);
    expect(Object.keys(slowOne.latency_last_30m)).toEqual(['p50', 'p75', 'p90', 'p99']);
    // 150 ms held before the head: milliseconds, not seconds.
    expect(slowOne.latency_last_30m.p50).toBeGreaterThanOrEqual(SLOW_HEAD_MS - 5);
    expect(slowOne.latency_last_30m.p99).toBeGreaterThanOrEqual(slowOne.latency_last_30m.p50);
    expect(slowOne.throughput_last_30m.p50).toBeGreaterThan(0);
    expect([slowOne.uptime_last_30m, fastOne.latency_last_30m, fastOne.throughput_last_30m]).toEqual([null, null, null]);
    for (const e of body.data.endpoints) e.provider_name = 'OpenAI'; // a closed enum of the service's (docs/conformance.md)
    expect(violations(answerValidator('get', '/models/{author}/{slug}/endpoints'), body)).toBe('');
  });

  it("a failure is no latency to show: only the answers' percentiles", async () => {
    const ask = { model: 'test/wobble', provider: { order: ['wobbly', 'fast'] } };
    expect([await post(ask), await post(ask)]).toEqual(['fast', 'wobbly']);
    const wobblyOne = (await endpointsOf('test/wobble')).data.endpoints.find((e: any) => e.provider_name === 'wobbly');
    // Its window: a failure (latency Infinity, which JSON would say null) and an answer; listed, the answer's alone.
    expect(Object.values(wobblyOne.latency_last_30m).map((v) => typeof v)).toEqual(['number', 'number', 'number', 'number']);
  });

  it.each(FLAVORS)("a fake model's endpoints (%s) measure nothing, asked or not", async (flavor) => {
    const fakes = await startEmulator({ stateDir: join(g.dir, flavor), port: 0, flavor });
    try {
      const headers = { authorization: `Bearer ${fakes.store.firstKeys().apiKey}`, 'content-type': 'application/json' };
      const asked = await fetch(`${fakes.apiRoot}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }) });
      expect(asked.status).toBe(200);
      const body = (await (await fetch(`${fakes.apiRoot}/v1/models/local/echo/endpoints`, { headers })).json()) as any;
      const shown = body.data.endpoints.map((e: any) => [e.latency_last_30m, e.throughput_last_30m, e.uptime_last_30m]);
      expect(shown).toEqual(body.data.endpoints.map(() => [null, null, null]));
    } finally {
      await fakes.close();
    }
  });
});

describe('no herd on an unmeasured provider', () => {
  it.each(['latency', 'throughput'] as const)('of a burst sorted by %s, one request explores the unmeasured provider; the others take the measured one', async (sort) => {
    const fresh = herds[sort], model = `test/herd-${sort}`, explorer = `fresh-${sort}`;
    expect(await post({ model, provider: { only: ['known'] } })).toBe('known');
    const BURST = 8;
    // fresh holds its answers until the others have answered, or until a second request reaches it (the herd).
    let othersAnswered = 0;
    const release = () => (othersAnswered === BURST - 1 || fresh.asked > 1) && fresh.release();
    fresh.onAsked = release;
    const answers = await Promise.all(Array.from({ length: BURST }, async () => {
      const provider = await post({ model, provider: { sort } });
      if (provider !== explorer) othersAnswered++;
      release();
      return provider;
    }));
    expect(answers.filter((p) => p === explorer)).toHaveLength(1);
    expect(fresh.asked).toBe(1);
    // Measured now (a slow first sample or not, it has one): the next request ranks it by its p50.
    expect([explorer, 'known']).toContain(await post({ model, provider: { sort } }));
  });
});
