import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, sseChunk, type LocalUpstream } from '../support/upstreams.js';

// A provider key that an upstream puts in a successful answer's content (an echo server, a debug
// proxy) is hidden as its refusals' are: in a whole answer, in a stream (the key's bytes split
// between two network reads too), in the cassette recorded from it and in the kept content. Any
// configured provider's key, not only the one of the provider that answered.
const KEY = 'sk-provider-secret-0123456789abcdef';
const OTHER = 'other-provider-key-fedcba9876543210';
const said = `mine is ${KEY}, theirs ${OTHER}.`;
const hidden = 'mine is [provider key], theirs [provider key].';

let dir: string;
let upstream: LocalUpstream;
let gateway: Emulator;
let recorder: Emulator;
/** Lets the upstream send the second half of a stream's split key: the caller has seen the first token by then. */
let release: () => void = () => undefined;

const yaml = (p: string) => `providers:\n  - { name: up, base_url: "${p}", api_key_env: UP_KEY, models: { test/m: m }, embedding_models: { test/e: e } }\n  - { name: other, base_url: "${p}", api_key_env: OTHER_KEY, models: { test/o: o } }\n`;
const env = { UP_KEY: KEY, OTHER_KEY: OTHER };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-key-answer-'));
  upstream = await localUpstream((req, res, body) => {
    if (req.url!.endsWith('/embeddings')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], note: said, usage: { prompt_tokens: 1, total_tokens: 1 } }));
      return;
    }
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: said }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = sseChunk(said);
    const cut = event.indexOf(KEY) + 10;
    // The first token, and the event with the key up to its 10th character: one network read.
    res.write(sseChunk('Hi ') + event.slice(0, cut));
    const rest = new Promise<void>((resolve) => (release = resolve));
    void rest.then(() => res.end(`${event.slice(cut)}${sseChunk(null, 'stop')}data: [DONE]\n\n`));
  });
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml(upstream.baseUrl), env) } });
  recorder = await startEmulator({ stateDir: join(dir, 'recorder'), port: 0, gateway: { config: parseProviders(yaml(upstream.baseUrl), env), cassettes: { dir: join(dir, 'tapes'), mode: 'record' } } });
});

afterAll(async () => {
  await gateway?.close();
  await recorder?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (e: Emulator, path: string, body: Record<string, unknown>) =>
  fetch(`${e.apiRoot}${path}`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** A streamed answer read whole; the upstream lets the rest of its split key go once the first token came through. */
async function streamed(e: Emulator, model: string): Promise<string> {
  const res = await post(e, '/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: 'your key?' }] });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
    if (text.includes('Hi ')) release();
  }
}

const contentOf = async (e: Emulator, id: string) =>
  (await (await fetch(`${e.apiRoot}/v1/generation/content?id=${id}`, { headers: { authorization: `Bearer ${e.store.firstKeys().managementKey}` } })).json()) as { data: { output: { completion: string } } };

describe('a provider key in a successful answer', () => {
  it.each(['test/m', 'test/o'])('a whole chat answer of %s: hidden, the kept content too', async (model) => {
    const res = await post(gateway, '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'your key?' }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(KEY.slice(0, 12));
    expect(text).not.toContain(OTHER.slice(0, 12));
    const answer = JSON.parse(text) as { id: string; choices: { message: { content: string } }[] };
    expect(answer.choices[0]!.message.content).toBe(hidden);
    expect((await contentOf(gateway, answer.id)).data.output.completion).toBe(hidden);
  });

  it('embeddings: hidden', async () => {
    const res = await post(gateway, '/v1/embeddings', { model: 'test/e', input: 'x' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { note: string }).note).toBe(hidden);
  });

  it('a stream whose key came in two network reads: hidden, the kept content too', async () => {
    const text = await streamed(gateway, 'test/m');
    expect(text).not.toContain(KEY.slice(0, 10));
    expect(text).not.toContain(OTHER.slice(0, 12));
    const chunks = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as { id: string; choices?: { delta?: { content?: string } }[] });
    expect(chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('')).toBe(`Hi ${hidden}`);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect((await contentOf(gateway, chunks[0]!.id)).data.output.completion).toBe(`Hi ${hidden}`);
  });

  it('--record: the cassettes of such answers, whole and streamed, keep them without the keys', async () => {
    const res = await post(recorder, '/v1/chat/completions', { model: 'test/o', messages: [{ role: 'user', content: 'your key?' }] });
    expect(res.status).toBe(200);
    await res.text();
    await streamed(recorder, 'test/m');
    await recorder.close();
    const files = readdirSync(join(dir, 'tapes'));
    expect(files).toHaveLength(2);
    for (const file of files) {
      const tape = readFileSync(join(dir, 'tapes', file), 'utf8');
      expect(tape).toContain('[provider key]');
      expect(tape).not.toContain(KEY.slice(0, 10));
      expect(tape).not.toContain(OTHER.slice(0, 12));
    }
  });
});
