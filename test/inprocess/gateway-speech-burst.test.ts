import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';

// Gateway speech asked only that the balance be above zero, then charged up to what was left once the
// audio was out: a burst of speech requests all went upstream together, and the later ones of a short
// balance were served free. Its cost is
// known up front (its characters), so each now holds it in memory while it runs (at most what is left),
// as an unbounded request holds its estimate: the burst's later ones are refused (402).
let up: LocalUpstream;
let gw: Awaited<ReturnType<typeof testGateway>>;
const held: ServerResponse[] = [];
let arrived: (() => void) | undefined;
const voice = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'audio/mpeg' });
  res.end(Buffer.alloc(256, 7));
};

beforeAll(async () => {
  // The first two of a burst are held until the test answers; any later one is answered at once.
  up = await localUpstream((_req, res) => {
    if (held.length >= 2) return voice(res);
    held.push(res);
    arrived?.();
  });
  gw = await testGateway(`providers:\n  - { name: up, base_url: "${up.baseUrl}", speech_models: { test/tts: x }, prices: { test/tts: { prompt: 0.001 } } }\n`, 'speech-burst');
});

afterAll(async () => {
  held.splice(0).forEach((res) => res.destroy());
  await gw?.close();
  await up?.close();
});

// 100 characters: 0.1 USD an answer.
const input = 'x'.repeat(100);
const speak = (key: string) => fetch(`${gw.gateway.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/tts', input, voice: 'alloy' }) });
/** A speech request held at the upstream until the test answers it. */
async function holdOne(key: string): Promise<{ res: Promise<Response> }> {
  const seen = new Promise<void>((resolve) => (arrived = resolve));
  const res = speak(key);
  await seen;
  return { res };
}

describe('a burst of gateway speech', () => {
  it('is refused once the balance is held; the one in flight charged in full', async () => {
    // Speech is a management key's (the route's access).
    const { managementKey: apiKey } = gw.gateway.store.createWorkspace('tts-burst', 0.15);
    const one = await holdOne(apiKey);
    // 0.05 left after the 0.1 held: served (as before, charged up to what is left).
    const two = await holdOne(apiKey);
    const asked = up.seen.length;
    const three = await speak(apiKey);
    // Before: 200 once answered, free (nothing left to charge).
    expect(three.status).toBe(402);
    expect(up.seen.length).toBe(asked);
    held.splice(0).forEach(voice);
    for (const res of [await one.res, await two.res]) {
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(gw.gateway.store.balance('tts-burst')).toBeCloseTo(0, 10);
  });
});
