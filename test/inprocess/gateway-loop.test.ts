// A providers file whose provider points back at the gateway itself (its own port in base_url, its own
// key in api_key_env): before, one request made the next without end (a chat left running grew to
// thousands of connections and hundreds of MB, the caller given a 502 after timeout_ms while the loop
// went on). Now the gateway names itself in the Via header it sends upstream and refuses a request that
// comes back bearing it (508): the provider is passed over at the first hop, in words. It passes on the
// names of the gateways before it, so a loop through two gateways ends the same way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { childPort } from '../support/upstreams.js';
import { gatewaysBefore } from '../../src/emulator/http/loop-guard.js';

let home: string;
let gateway: Emulator;
let keys: { apiKey: string; managementKey: string };

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-gateway-loop-'));
  const stateDir = join(home, 'state');
  // A first start makes the state's keys, which the providers file then names as the provider's key.
  const first = await startEmulator({ stateDir, port: 0 });
  keys = first.store.firstKeys();
  await first.close();
  const port = await childPort();
  const config = parseProviders(
    `providers:\n  - { name: self, base_url: "http://127.0.0.1:${port}/api/v1", api_key_env: SELF_KEY, timeout_ms: 5000, models: { test/loop: test/loop }, speech_models: { test/say: test/say } }\n`,
    { SELF_KEY: keys.managementKey },
  );
  gateway = await startEmulator({ stateDir, port, gateway: { config } });
});

afterAll(async () => {
  await gateway?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

const post = (path: string, body: Record<string, unknown>) =>
  fetch(`${gateway.apiRoot}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${keys.managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('a provider whose base_url is the gateway itself', () => {
  it.each([
    ['chat', '/chat/completions', { model: 'test/loop', messages: [{ role: 'user', content: 'hi' }] }],
    ['a chat stream', '/chat/completions', { model: 'test/loop', stream: true, messages: [{ role: 'user', content: 'hi' }] }],
    ['speech', '/audio/speech', { model: 'test/say', voice: 'alloy', input: 'hi' }],
  ])('%s: passed over at the first hop, the loop named', async (_, path, body) => {
    const res = await post(path, body);
    expect(res.status).toBe(502);
    // A loop meets itself again: the client is told not to ask again.
    expect(res.headers.get('x-should-retry')).toBe('false');
    const { error } = (await res.json()) as { error: { message: string } };
    expect(error.message).toContain('self: HTTP 508');
    expect(error.message).toContain('Loop detected: this gateway sent this request itself');
  });

  it("the gateway's request log holds the callers' requests alone, no hop", async () => {
    await post('/chat/completions', { model: 'test/loop', messages: [{ role: 'user', content: 'count' }] });
    const log = await fetch(`${gateway.apiRoot}/_emulator/requests`, { headers: { authorization: `Bearer ${keys.managementKey}` } });
    const entries = ((await log.json()) as { data: { path: string; body?: { messages?: { content: string }[] } }[] }).data;
    expect(entries.filter((e) => e.body?.messages?.[0]?.content === 'count')).toHaveLength(1);
  });
});

describe('two gateways whose providers point at each other', () => {
  it('the request comes back to the first with its name passed on by the second: refused there, each logged once', async () => {
    const [portA, portB] = [await childPort(), await childPort()];
    const made = await Promise.all(['a', 'b'].map(async (name) => {
      const state = join(home, `pair-${name}`);
      const e = await startEmulator({ stateDir: state, port: 0 });
      const k = e.store.firstKeys().managementKey;
      await e.close();
      return { state, key: k };
    }));
    const file = (to: number) => `providers:\n  - { name: other, base_url: "http://127.0.0.1:${to}/api/v1", api_key_env: OTHER_KEY, timeout_ms: 5000, models: { test/loop: test/loop } }\n`;
    const a = await startEmulator({ stateDir: made[0]!.state, port: portA, gateway: { config: parseProviders(file(portB), { OTHER_KEY: made[1]!.key }) } });
    const b = await startEmulator({ stateDir: made[1]!.state, port: portB, gateway: { config: parseProviders(file(portA), { OTHER_KEY: made[0]!.key }) } });
    try {
      const res = await fetch(`${a.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${made[0]!.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/loop', messages: [{ role: 'user', content: 'round' }] }) });
      expect(res.status).toBe(502);
      const logged = async (e: Emulator, key: string) => {
        const log = await fetch(`${e.apiRoot}/_emulator/requests`, { headers: { authorization: `Bearer ${key}` } });
        return ((await log.json()) as { data: { body?: { messages?: { content: string }[] } }[] }).data.filter((x) => x.body?.messages?.[0]?.content === 'round').length;
      };
      expect([await logged(a, made[0]!.key), await logged(b, made[1]!.key)]).toEqual([1, 1]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

it("only gateways' names of a caller's Via are passed on", () => {
  expect(gatewaysBefore('1.1 corp-proxy, 1.1 router-gateway-0123456789ab')).toBe('1.1 router-gateway-0123456789ab');
  expect(gatewaysBefore(['1.0 squid', 'HTTP/1.1 cdn'])).toBeUndefined();
  expect(gatewaysBefore(undefined)).toBeUndefined();
});
