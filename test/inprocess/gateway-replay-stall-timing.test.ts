import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';

// A stream the gateway let go of (a role-only chunk, then silence past first_event_timeout_ms) was recorded
// with its break but not when it came: replayed "as recorded" (--replay-timing 1), the stall broke at once and
// the fallback answered ~300 ms sooner than it had; a client's own timeouts replayed against it never met the
// stall. Now the break keeps its time (`broken_after_ms`) and comes no sooner than it, times the timing.
let dir: string;
let stalling: LocalUpstream;
let good: LocalUpstream;
const STALL_MS = 300;
const TIMING = 3;

const config = () => parseProviders(`providers:
  - { name: stalls, base_url: "${stalling.baseUrl}", first_event_timeout_ms: ${STALL_MS}, models: { t/m: m } }
  - { name: good, base_url: "${good.baseUrl}", models: { t/m: m } }
`, {});

async function ask(e: Emulator): Promise<{ ms: number; text: string }> {
  const started = performance.now();
  const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 't/m', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
  const text = await res.text();
  return { ms: performance.now() - started, text };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-replay-stall-'));
  stalling = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseChunk(null));
  });
  good = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk(null)}${sseChunk('answered', 'stop')}data: [DONE]\n\n`);
  });
});

afterAll(async () => {
  await stalling?.close();
  await good?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a stalled stream passed over while recording', () => {
  it('breaks on replay no sooner than it broke, times --replay-timing', async () => {
    const cassettes = join(dir, 'cassettes');
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: config(), cassettes: { dir: cassettes, mode: 'record' } } });
    try {
      expect((await ask(recorder)).text).toContain('answered');
    } finally {
      await recorder.close();
    }
    const stalled = readdirSync(cassettes).find((f) => f.startsWith('stalls-'))!;
    const response = (JSON.parse(readFileSync(join(cassettes, stalled), 'utf8')) as { response: { broken?: string; broken_after_ms?: number } }).response;
    expect(response.broken).toBe(`stalls: no answer within first_event_timeout_ms (${STALL_MS} ms)`);
    expect(response.broken_after_ms).toBeGreaterThanOrEqual(STALL_MS);

    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: config(), cassettes: { dir: cassettes, mode: 'replay', timing: TIMING } } });
    try {
      const replayed = await ask(player);
      expect(replayed.text).toContain('answered');
      // Before: the break came right after the role chunk (a few ms); now at its time, tripled.
      expect(replayed.ms).toBeGreaterThanOrEqual(response.broken_after_ms! * TIMING - 5);
    } finally {
      await player.close();
    }
  });
});
