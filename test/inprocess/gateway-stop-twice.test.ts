import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';

// The in-process gateway stopped twice at once (a test's finally after its own stop) with streams open:
// each stream ends with the error chunk and [DONE], and both stops end together. Before, the second stop's
// wait on the open answers took the first one's wake-up: the first waited out its 1 s bound.
let dir: string;
let up: LocalUpstream;
let asked = 0;
let allAsked: () => void = () => {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-stop-twice-'));
  // Some of an answer, then nothing more until the gateway lets the request go.
  up = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseChunk('hello'));
    if (++asked === 2) allAsked();
  });
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

const settled = (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);

describe('an in-process gateway closed twice with streams open', () => {
  it('ends every stream with the error chunk and [DONE]; the first close ends with the second', async () => {
    const upstreamAsked = new Promise<void>((r) => (allAsked = r));
    const config = parseProviders(`providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { test/m: m } }\n`, {});
    const gateway = await startEmulator({ stateDir: join(dir, 'g'), port: 0, gateway: { config } });
    const { apiKey } = gateway.store.firstKeys();
    // The answer's text, once its first words came through (the stream is open at the caller).
    const stream = async () => {
      const res = await fetch(`${gateway.apiRoot}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test/m', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('hello')) text += (await reader.read()).value ?? '';
      const rest = (async () => {
        for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value;
        return text;
      })();
      return { rest };
    };
    const open = await Promise.all([stream(), stream()]);
    await upstreamAsked;
    const first = gateway.close();
    const second = gateway.close();
    await second;
    // Before: false, the first close still waiting (for 1 s) on answers that had all ended.
    expect(await settled(first)).toBe(true);
    for (const text of await Promise.all(open.map((o) => o.rest))) {
      expect(text).toContain('hello');
      expect(text).toMatch(/"finish_reason":"error".*\n\ndata: \[DONE\]\n\n$/);
    }
  });
});
