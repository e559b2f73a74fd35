import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';

// A gateway that stops (SIGTERM) lets its upstream requests go: one still waiting for its answer is
// a 502 (docs/gateway.md). Before, the failure of the gateway's own stop was passed over like a dead
// provider's, and the next candidate was asked: a fake model named as the fallback answered (200),
// and a long stream of one would be cut bare when the sockets close, not end with the error chunk.
let dir: string;
let up: LocalUpstream;
let asked: () => void;
let upstreamAsked: Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-stop-no-fallback-'));
  // Streamed: a role chunk (held, no answer yet) and nothing more; whole: no answer at all.
  up = await localUpstream((_req, res, body) => {
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseChunk(null));
    }
    asked();
  });
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a gateway stopping while an upstream has not answered', () => {
  it.each([false, true])('stream %s: a 502 saying so, no fallback asked', async (stream) => {
    upstreamAsked = new Promise<void>((r) => (asked = r));
    const config = parseProviders(`providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { test/m: m } }\n`, {});
    const gateway = await startEmulator({ stateDir: join(dir, `g-${stream}`), port: 0, gateway: { config } });
    const { apiKey } = gateway.store.firstKeys();
    const answer = fetch(`${gateway.apiRoot}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/m', models: ['local/echo'], stream, messages: [{ role: 'user', content: 'hi' }] }),
    }).then(async (r) => ({ status: r.status, text: await r.text() }));
    await upstreamAsked;
    await gateway.close();
    const { status, text } = await answer;
    // Before: 200, local/echo's answer.
    expect(status).toBe(502);
    expect(text).toContain('up: the gateway is stopping');
    expect(text).not.toContain('local/echo');
  });
});
