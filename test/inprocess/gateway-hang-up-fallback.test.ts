import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { LocalModels } from '../../src/emulator/providers/local.js';
import { Gateway } from '../../src/emulator/routing/gateway.js';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { sseChunk } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// A caller who hangs up while the gateway holds an upstream's stream (a role chunk came, no token
// yet) has left: the upstream is let go, and no other candidate is asked for an answer nobody reads.
// Before: the fake model named as the fallback (`models: [..., "local/lorem"]`) was run anyway,
// ignoring the hang-up, and its answer written to the closed connection.
let asked: () => void;
const upstreamAsked = new Promise<void>((r) => (asked = r));

const gw = gatewayForAll({
  prefix: 'router-hang-up-fallback-',
  upstreams: { up: (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseChunk(null));
    asked();
  } },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", models: { test/m: m }, prices: { test/m: { prompt: 0.001, completion: 0.001 } } }\n`,
});
afterAll(() => {
  vi.restoreAllMocks();
});

describe('a hang-up while the stream is held', () => {
  it('runs no fallback: nothing charged, no generation kept', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('held-cut', 100);
    // Spies that call through: when the gateway is done with the request, and whether it asked the fake model.
    const handled = vi.spyOn(Gateway.prototype, 'chat');
    const fallback = vi.spyOn(LocalModels.prototype, 'chat');
    const stop = new AbortController();
    const res = fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/m', models: ['local/lorem'], stream: true, messages: [{ role: 'user', content: 'write 3000 words' }] }),
      signal: stop.signal,
    }).catch((e: Error) => e);
    await upstreamAsked;
    stop.abort();
    expect(await res).toBeInstanceOf(Error);
    // The gateway's handling of the request, to its end.
    await vi.waitFor(() => expect(handled).toHaveBeenCalledTimes(1), SETTLE);
    // Before: it never ended (the fake model's stream written to the closed connection, waiting for it to drain).
    await handled.mock.results[0]!.value;
    // Before: the fake model was asked once the upstream was let go.
    expect(fallback).not.toHaveBeenCalled();
    await gw.gateway.store.idle();
    const kept = join(gw.dir, 'gateway', 'generations.jsonl');
    const lines = existsSync(kept) ? readFileSync(kept, 'utf8').split('\n').filter(Boolean) : [];
    expect(lines.filter((l) => l.includes('held-cut'))).toEqual([]);
    expect(gw.gateway.store.balance('held-cut')).toBe(100);
  });
});
