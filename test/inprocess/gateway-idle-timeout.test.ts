import type { ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { post } from '../support/post.js';
import { sseChunk } from '../support/upstreams.js';
import { gatewayForAll } from '../support/gateway-for-all.js';

// A provider that keeps its connection alive with comments (`: ping`) and sends no event held the
// caller for ever: each ping resets timeout_ms's clock (undici's body timeout), and
// first_event_timeout_ms, when set, only covers the first event. idle_timeout_ms bounds the wait
// between a stream's events from its first answering one: after it the stream ends with the error
// chunk. Before it (a role-only chunk, then pings: a reasoning model thinking silently, for minutes
// maybe) idle_timeout_ms does not count: passing it over would pay for it twice; first_event_timeout_ms
// is the bound there. What the test waits on is the answer's end, which the old code never reached.
const timers = new Set<NodeJS.Timeout>();
/** An upstream that sends `first`, then a ping every 20 ms until the connection closes. */
const pinging = (first: string) => (_req: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(first);
  const timer = setInterval(() => res.write(': ping\n\n'), 20);
  timers.add(timer);
  res.on('close', () => clearInterval(timer));
};

const gw = gatewayForAll({
  prefix: 'router-idle-',
  upstreams: {
    after: pinging(sseChunk('Hello')),
    before: pinging(sseChunk(null)),
    ok: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${sseChunk('from ok', 'stop')}data: [DONE]\n\n`);
    },
  },
  providers: (urls) => `providers:
  - { name: after, base_url: "${urls.after}", idle_timeout_ms: 300, models: { t/a: m } }
  - { name: before, base_url: "${urls.before}", idle_timeout_ms: 300, first_event_timeout_ms: 1500, models: { t/b: m } }
  - { name: ok, base_url: "${urls.ok}", models: { t/b: m } }
`,
  stateName: 'g',
});
// Registered after gatewayForAll's, so it runs first (afterAll hooks run in reverse): the pings stop before the close.
afterAll(() => {
  for (const t of timers) clearInterval(t);
});

const ask = (model: string) => post({ apiRoot: gw.gateway.apiRoot, apiKey: gw.gateway.store.firstKeys().apiKey }, '/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });

describe('a provider that only pings', () => {
  it('after its first token: the stream ends with the error chunk and [DONE]', async () => {
    const res = await ask('t/a');
    expect(res.status).toBe(200);
    const events = res.text.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events.at(-1)).toBe('data: [DONE]');
    const last = JSON.parse(events.at(-2)!.slice(6));
    expect(last.error.message).toBe('Provider returned an error mid-stream: after: no event within idle_timeout_ms (300 ms)');
    expect(res.text).toContain('Hello');
  });

  it('before its first token: not idle (a model thinking), passed over at first_event_timeout_ms', async () => {
    const res = await post({ apiRoot: gw.gateway.apiRoot, apiKey: gw.gateway.store.firstKeys().apiKey }, '/v1/chat/completions', { model: 't/b', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { 'x-router-metadata': 'enabled' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('from ok');
    expect(res.text).not.toContain('"finish_reason":"error"');
    expect(res.text).toContain('no answer within first_event_timeout_ms (1500 ms)');
    expect(res.text).not.toContain('idle_timeout_ms');
  });

  it('idle_timeout_ms must be a whole number of milliseconds', () => {
    expect(() => parseProviders('providers:\n  - { name: p, base_url: "http://127.0.0.1:9/v1", idle_timeout_ms: -1, models: { t/m: m } }\n', {})).toThrow('idle_timeout_ms must be a whole number of milliseconds');
  });
});
