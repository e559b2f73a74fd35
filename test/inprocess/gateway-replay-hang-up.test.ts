import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { Gateway } from '../../src/emulator/routing/gateway.js';
import type { Cassette } from '../../src/emulator/providers/cassette.js';
import { deadPort, localUpstream, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// On replay a cassette answers whatever the caller's signal says: a provider asked after the caller
// hung up was answered at once (a live upstream asked so throws, and the gateway stops there). So a
// Responses request whose first provider's held stream broke after a hang-up went on to the next
// provider's cassette, and its whole answer was charged to a caller who had gone. Now a replayed
// provider asked for a caller who has gone fails like a live one: nothing more is asked or charged.
let dir: string;
const ups: LocalUpstream[] = [];
const BODY = { model: 'test/m', stream: true, input: 'hello' };
const yaml = (a: string, b: string) =>
  parseProviders(`providers:\n  - { name: a, base_url: "${a}", responses: true, models: { test/m: m }, prices: { test/m: { prompt: 0.001, completion: 0.001 } } }\n  - { name: b, base_url: "${b}", responses: true, models: { test/m: m }, prices: { test/m: { prompt: 0.001, completion: 0.001 } } }\n`, {});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-replay-hang-up-'));
  // a: its stream opens, then breaks before any output (recorded broken); b: a whole answer.
  const a = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ type: 'response.created', response: { id: 'r1', status: 'in_progress', output: [] } })}\n\n`);
    setTimeout(() => res.socket?.destroy(), 20);
  });
  const b = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'r2', object: 'response', status: 'completed', model: 'm', output: [{ type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi', annotations: [] }] }], usage: { input_tokens: 1000, output_tokens: 1000, total_tokens: 2000 } }));
  });
  ups.push(a, b);
});

afterAll(async () => {
  vi.restoreAllMocks();
  for (const u of ups) await u.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('replay, a caller who hangs up while the first stream is held', () => {
  it('asks no further provider: nothing charged', async () => {
    const cassettes = join(dir, 'cassettes');
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: yaml(ups[0]!.baseUrl, ups[1]!.baseUrl), cassettes: { dir: cassettes, mode: 'record' } } });
    try {
      const res = await fetch(`${recorder.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${recorder.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
      expect(res.status).toBe(200);
      await res.text();
    } finally {
      await recorder.close();
    }
    const files = readdirSync(cassettes);
    expect(files).toHaveLength(2);
    // a's broken stream waits a minute before its break: the caller hangs up meanwhile.
    for (const f of files) {
      const c = JSON.parse(readFileSync(join(cassettes, f), 'utf8')) as Cassette;
      if (c.provider !== 'a') continue;
      expect(c.response.broken).toBeDefined();
      c.response.chunks!.push({ after_ms: 60_000, data: { type: 'response.in_progress', response: { id: 'r1', status: 'in_progress', output: [] } } });
      writeFileSync(join(cassettes, f), JSON.stringify(c));
    }
    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: yaml(dead, dead), cassettes: { dir: cassettes, mode: 'replay' } } });
    try {
      const { apiKey } = player.store.createWorkspace('cut', 100);
      const handled = vi.spyOn(Gateway.prototype, 'respond');
      const stop = new AbortController();
      const res = fetch(`${player.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY), signal: stop.signal }).catch((e: Error) => e);
      await vi.waitFor(() => expect(handled).toHaveBeenCalledTimes(1), SETTLE);
      stop.abort();
      expect(await res).toBeInstanceOf(Error);
      await handled.mock.results[0]!.value;
      // Before: b's cassette answered the gone caller, charged 2.000000 (2,000 tokens at 0.001).
      expect(player.store.balance('cut')).toBe(100);
    } finally {
      await player.close();
    }
  });
});
