import { describe, expect, it, vi } from 'vitest';
import { round } from '../../src/emulator/models/models.js';
import { SETTLE } from '../support/until.js';
import { gatewayForAll } from '../support/gateway-for-all.js';

// A caller who hangs up pays what the provider was asked to produce up to then, at the price the
// model is listed at, as a fake model's hang-up is paid (stream-bill.ts) and a priced chat's:
// - speech after audio was written: its input's characters at the prompt price (the provider was
//   asked to voice all of it; which characters the bytes voice cannot be told). Before: free.
// - chat on a provider without prices: the prompt and the content written, at the prices the model
//   list shows (its first provider's). Before: free unless the upstream's usage came.
// A hang-up before any audio or content is free; a model listed at 0 is free.
const PROMPT = 1e-6;
const COMPLETION = 1e-4;
const CHAR = 1e-3;
const SENT = 5;
/** Told when the upstream was asked (the speech that sends nothing). */
let asked: () => void = () => {};
/** Upstream requests whose connection the gateway let go (it heard the caller's hang-up before that). */
let letGo = 0;

const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ id: `gen-${Math.random().toString(36).slice(2)}`, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;

// Chat: a role chunk and SENT words, then nothing. Speech: 512 bytes of audio then nothing, or (input "silent") nothing at all.
const gw = gatewayForAll({
  prefix: 'router-hang-up-listed-',
  upstreams: { up: (req, res, body) => {
    res.on('close', () => letGo++);
    if (req.url!.endsWith('/audio/speech')) {
      asked();
      if (body.input === 'silent') return;
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(Buffer.alloc(512, 7));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant' }));
    for (let i = 0; i < SENT; i++) res.write(chunk({ content: `word${i} ` }));
  } },
  providers: ({ up }) => `providers:
  - { name: priced, base_url: "${up}", models: { test/m: m }, speech_models: { test/tts: t }, prices: { test/m: { prompt: ${PROMPT}, completion: ${COMPLETION} }, test/tts: { prompt: ${CHAR} } } }
  - { name: free, base_url: "${up}", models: { test/m: m, test/zero: m }, speech_models: { test/tts: t } }
`,
});

const post = (key: string, path: string, body: unknown, signal: AbortSignal) => fetch(`${gw.gateway.apiRoot}/v1/${path}`, { method: 'POST', signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Sends `body` as a fresh workspace with 1 credit, reads until `enough` says so, hangs up; the workspace. */
async function hangUp(ws: string, path: string, body: unknown, enough: (text: string, bytes: number) => boolean) {
  const { managementKey: apiKey } = gw.gateway.store.createWorkspace(ws, 1);
  const caller = new AbortController();
  const res = await post(apiKey, path, body, caller.signal);
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = '';
  let bytes = 0;
  while (!enough(text, bytes)) {
    const { value, done } = await reader.read();
    if (done) break;
    bytes += value.length;
    text += Buffer.from(value).toString('latin1');
  }
  caller.abort();
  return { apiKey, id: res.headers.get('x-generation-id'), text };
}

const generation = (apiKey: string, id: string) =>
  vi.waitFor(async () => {
    const r = await fetch(`${gw.gateway.apiRoot}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: Record<string, unknown> }).data;
  }, SETTLE);

describe('a hang-up through the gateway is charged at the price the model is listed at', () => {
  it('speech after audio was written: its input characters at the prompt price; the generation is cancelled', async () => {
    const input = 'the tide comes in, the tide goes out';
    const { apiKey, id } = await hangUp('speech-cut', 'audio/speech', { model: 'test/tts', input, voice: 'alloy', provider: { only: ['priced'] } }, (_t, bytes) => bytes >= 512);
    const owed = round(input.length * CHAR);
    await vi.waitFor(() => expect(gw.gateway.store.balance('speech-cut')).toBeCloseTo(1 - owed, 10), SETTLE);
    expect(await generation(apiKey, id!)).toMatchObject({ cancelled: true, total_cost: owed, provider_name: 'priced' });
  });

  it('speech on a provider without prices: at the model listed price too', async () => {
    const input = 'one two three';
    await hangUp('speech-free', 'audio/speech', { model: 'test/tts', input, voice: 'alloy', provider: { only: ['free'] } }, (_t, bytes) => bytes >= 512);
    await vi.waitFor(() => expect(gw.gateway.store.balance('speech-free')).toBeCloseTo(1 - round(input.length * CHAR), 10), SETTLE);
  });

  it('speech before any audio: nothing charged', async () => {
    const upstreamAsked = new Promise<void>((resolve) => (asked = resolve));
    const { managementKey } = gw.gateway.store.createWorkspace('speech-early', 1);
    const caller = new AbortController();
    const answer = post(managementKey, 'audio/speech', { model: 'test/tts', input: 'silent', voice: 'alloy', provider: { only: ['priced'] } }, caller.signal).catch(() => undefined);
    await upstreamAsked;
    const before = letGo;
    caller.abort();
    await answer;
    // The gateway let the upstream go when it heard the hang-up: what it charges, it has charged by then.
    await vi.waitFor(() => expect(letGo).toBeGreaterThan(before), SETTLE);
    expect(gw.gateway.store.balance('speech-early')).toBe(1);
  });

  it('chat on a provider without prices: the prompt and the content written at the listed prices', async () => {
    const body = { model: 'test/m', stream: true, provider: { only: ['free'] }, messages: [{ role: 'user', content: 'part' }] };
    await hangUp('chat-free', 'chat/completions', body, (text) => text.includes(`word${SENT - 1}`));
    // "user: part" is 3 tokens as the fake models count them; SENT words of one token each.
    const owed = round(round(3 * PROMPT) + round(SENT * COMPLETION));
    await vi.waitFor(() => expect(gw.gateway.store.balance('chat-free')).toBeCloseTo(1 - owed, 10), SETTLE);
  });

  it('chat on a model listed at 0 (no provider gives prices): free', async () => {
    const body = { model: 'test/zero', stream: true, messages: [{ role: 'user', content: 'part' }] };
    const before = letGo;
    const { apiKey } = await hangUp('chat-zero', 'chat/completions', body, (text) => text.includes(`word${SENT - 1}`));
    const models = await fetch(`${gw.gateway.apiRoot}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });
    const listed = ((await models.json()) as { data: { id: string; pricing: { prompt: string; completion: string } }[] }).data.find((m) => m.id === 'test/zero');
    expect(listed!.pricing).toEqual({ prompt: '0', completion: '0' });
    await vi.waitFor(() => expect(letGo).toBeGreaterThan(before), SETTLE);
    expect(gw.gateway.store.balance('chat-zero')).toBe(1);
  });
});
