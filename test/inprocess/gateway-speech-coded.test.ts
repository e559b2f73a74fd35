import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';

// Live speech passed over an upstream's refusal (a 400) sent in gzip, deflate or br as a broken
// provider ("an answer in content-encoding …"): the next provider voiced what the caller got wrong, or
// the caller got a 502. Chat, embeddings and Responses decode such an answer and relay it as the
// caller's 400; speech does now, and a coded 503 is passed over with its words, not garbled bytes.
const CODERS: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
let coded: LocalUpstream;
let ok: LocalUpstream;
let gw: Awaited<ReturnType<typeof testGateway>>;

beforeAll(async () => {
  // Answers in the coding the input names: a 400 (`refuse gzip`) or a 503 (`busy gzip`).
  coded = await localUpstream((_req, res, body) => {
    const [what, coding] = String(body.input).split(' ');
    const status = what === 'busy' ? 503 : 400;
    res.writeHead(status, { 'content-type': 'application/json', 'content-encoding': coding! });
    res.end(CODERS[coding!]!(Buffer.from(JSON.stringify({ error: { code: status, message: `upstream ${what} in ${coding}` } }))));
  });
  ok = await localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    res.end(Buffer.from('ID3 from ok'));
  });
  gw = await testGateway(
    `providers:
  - { name: coded, base_url: "${coded.baseUrl}", speech_models: { t/tts: tts } }
  - { name: ok, base_url: "${ok.baseUrl}", speech_models: { t/tts: tts } }
`,
    'speech-coded',
  );
});

afterAll(async () => {
  await gw?.close();
  await coded?.close();
  await ok?.close();
});

const speak = (input: string) =>
  fetch(`${gw.gateway.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().managementKey}`, 'content-type': 'application/json', 'x-router-metadata': 'enabled' }, body: JSON.stringify({ model: 't/tts', input, voice: 'alloy' }) });

describe('live speech: an upstream error answer in a content-coding', () => {
  it.each(Object.keys(CODERS))('a 400 in %s is relayed as the caller’s 400, in its words, no other provider asked', async (coding) => {
    const asked = ok.seen.length;
    const res = await speak(`refuse ${coding}`);
    // Before: passed over as broken, and `ok` voiced it (200).
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(`coded: upstream refuse in ${coding}`);
    expect(ok.seen.length).toBe(asked);
  });

  it('a 503 in gzip is passed over with its words', async () => {
    // Only the coded provider: its failure is the 502's reason, in words.
    const res = await fetch(`${gw.gateway.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 't/tts', input: 'busy gzip', voice: 'alloy', provider: { only: ['coded'] } }) });
    const text = await res.text();
    expect(res.status).toBe(502);
    // Before: the gzip bytes as text.
    expect(text).toContain('upstream busy in gzip');
  });
});
