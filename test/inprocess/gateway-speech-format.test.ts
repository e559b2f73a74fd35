import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';

// Speech through an upstream that speaks as OpenAI's and Prism's do: its own default format is mp3 (the
// spec's is pcm), and its Content-Type may name no format (Prism's `audio/*`, `application/octet-stream`,
// none). A caller who named no format was given mp3 bytes, and answers were labelled `audio/*`: the
// gateway now asks for the format by name and labels the answer as the spec does (audio/mpeg, audio/pcm).
let up: LocalUpstream;
let gw: Awaited<ReturnType<typeof testGateway>>;
/** What the upstream says its audio is: `undefined` sends no Content-Type. */
let label: string | undefined;
const asked: unknown[] = [];

beforeAll(async () => {
  up = await localUpstream((_req, res, body) => {
    asked.push(body.response_format);
    const mp3 = (body.response_format ?? 'mp3') === 'mp3';
    res.writeHead(200, label === undefined ? {} : { 'content-type': label });
    res.end(mp3 ? Buffer.from('ID3\u0004\u0000') : Buffer.alloc(480));
  });
  gw = await testGateway(`providers:\n  - { name: up, base_url: "${up.baseUrl}", speech_models: { test/tts: tts-1 }, prices: { test/tts: { prompt: 0.000001 } } }\n`, 'speech-format');
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function speak(extra: Record<string, unknown>) {
  const res = await fetch(`${gw.gateway.apiRoot}/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/tts', input: 'the tide', voice: 'alloy', ...extra }) });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type'), bytes, asked: asked.at(-1) };
}

describe('speech formats through an OpenAI-compatible upstream', () => {
  it("no format named: the upstream is asked for the spec's pcm, and the answer is audio/pcm, not its audio/*", async () => {
    label = 'audio/*';
    const got = await speak({});
    expect([got.status, got.type, got.asked, got.bytes.length]).toEqual([200, 'audio/pcm', 'pcm', 480]);
  });

  it('mp3 labelled with no format (octet-stream, or no Content-Type) is audio/mpeg', async () => {
    label = 'application/octet-stream';
    expect(await speak({ response_format: 'mp3' })).toMatchObject({ status: 200, type: 'audio/mpeg', asked: 'mp3' });
    label = undefined;
    expect(await speak({ response_format: 'mp3' })).toMatchObject({ status: 200, type: 'audio/mpeg', asked: 'mp3' });
  });

  it("another server's name for pcm is the spec's audio/pcm", async () => {
    label = 'audio/L16; rate=24000; channels=1';
    expect(await speak({ response_format: 'pcm' })).toMatchObject({ status: 200, type: 'audio/pcm', asked: 'pcm' });
  });

  it('audio of another format than asked (an upstream that ignored it) keeps the type its bytes are', async () => {
    label = 'audio/mpeg';
    const got = await speak({ response_format: 'pcm' });
    expect([got.status, got.type]).toEqual([200, 'audio/mpeg']);
  });

  it('a format the spec does not have is the 400 the fake models give, and no upstream is asked', async () => {
    const before = asked.length;
    const got = await speak({ response_format: 'wav' });
    expect(got.status).toBe(400);
    expect(JSON.parse(got.bytes.toString()).error.message).toBe('response_format must be mp3 or pcm');
    expect(asked.length).toBe(before);
  });
});
