import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { post } from '../support/post.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';

// A provider that keeps its connection alive with comments (`: ping`) and sends no event held the
// caller for ever: each ping resets timeout_ms's clock (undici's body timeout), and
// first_event_timeout_ms, when set, only covers the first event. idle_timeout_ms bounds the wait
// between a stream's events from its first answering one: after it the stream ends with the error
// chunk. Before it (a role-only chunk, then pings: a reasoning model thinking silently, for minutes
// maybe) idle_timeout_ms does not count: passing it over would pay for it twice; first_event_timeout_ms
// is the bound there. What the test waits on is the answer's end, which the old code never reached.
let dir: string;
let gateway: Emulator;
const ups: LocalUpstream[] = [];
const timers = new Set<NodeJS.Timeout>();
/** Sends `first`, then a ping every 20 ms until the connection closes. */
const pinging = (first: string) =>
  localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(first);
    const timer = setInterval(() => res.write(': ping\n\n'), 20);
    timers.add(timer);
    res.on('close', () => clearInterval(timer));
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-idle-'));
  const afterToken = await pinging(sseChunk('Hello'));
  const beforeToken = await pinging(sseChunk(null));
  const ok = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk('from ok', 'stop')}data: [DONE]\n\n`);
  });
  ups.push(afterToken, beforeToken, ok);
  const config = parseProviders(
    `providers:
  - { name: after, base_url: "${afterToken.baseUrl}", idle_timeout_ms: 300, models: { t/a: m } }
  - { name: before, base_url: "${beforeToken.baseUrl}", idle_timeout_ms: 300, first_event_timeout_ms: 1500, models: { t/b: m } }
  - { name: ok, base_url: "${ok.baseUrl}", models: { t/b: m } }
`,
    {},
  );
  gateway = await startEmulator({ stateDir: join(dir, 'g'), port: 0, gateway: { config } });
});

afterAll(async () => {
  for (const t of timers) clearInterval(t);
  await gateway?.close();
  for (const u of ups) await u.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (model: string) => post({ apiRoot: gateway.apiRoot, apiKey: gateway.store.firstKeys().apiKey }, '/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: 'hi' }] });

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
    const res = await post({ apiRoot: gateway.apiRoot, apiKey: gateway.store.firstKeys().apiKey }, '/v1/chat/completions', { model: 't/b', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { 'x-router-metadata': 'enabled' });
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
