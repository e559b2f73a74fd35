import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A provider key's kind is the start its provider gives every key (`sk-proj-`): the random part after it
// can begin with a word (`ab3_`) that is as secret as the rest. A hostile upstream that ends a stream on
// the key's start, or quotes a start in the middle of its words, must get none of it past the real kind
// to the caller or a cassette. The gateway is `router serve --providers --record` over real HTTP, the
// caller the openai SDK, chat and Responses.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
const MASK = '[provider key]';
type Body = Record<string, unknown>;
const chunk = (choices: Body[]) => `data: ${JSON.stringify({ id: 'gen-hostile', object: 'chat.completion.chunk', created: 1, model: 'm', choices })}\n\n`;
const delta = (d: Body, finish: string | null = null) => ({ index: 0, delta: d, finish_reason: finish });
const ev = (x: Body) => `event: ${String(x.type)}\ndata: ${JSON.stringify(x)}\n\n`;
const textDelta = (d: string, n: number) => ev({ type: 'response.output_text.delta', sequence_number: n, item_id: 'm1', output_index: 0, content_index: 0, delta: d });

let next: { body?: string; events?: string[] } = {};
let dir: string;
let upstream: LocalUpstream;
let gateway: Emulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-key-kinds-'));
  upstream = await localUpstream(async (_req, res) => {
    if (next.body) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(next.body);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const text of [...next.events!, 'data: [DONE]\n\n']) await new Promise<void>((resolve) => res.write(text, () => resolve()));
    res.end();
  });
  const yaml = `providers:\n  - { name: up, responses: true, base_url: "${upstream.baseUrl}", api_key_env: UP_KEY, models: { test/m: m } }\n`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP_KEY: KEY }), cassettes: { dir: join(dir, 'tapes'), mode: 'record' } } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const client = () => new OpenAI({ apiKey: gateway.store.firstKeys().apiKey, baseURL: `${gateway.apiRoot}/v1`, maxRetries: 0, timeout: 20_000 });

/** Every run of 4 characters of the key past its real kind that `text` holds (none, when nothing of the secret got out). */
const secretIn = (text: string) => Array.from({ length: KEY.length - 11 }, (_, i) => KEY.slice(8 + i, 12 + i)).filter((part) => text.includes(part));

/** Every cassette the gateway wrote for the prompt `asked`, as text. */
const tapesOf = (asked: string) => readdirSync(join(dir, 'tapes')).map((f) => readFileSync(join(dir, 'tapes', f), 'utf8')).filter((t) => t.includes(asked)).join('\n');

async function chatContent(events: string[], asked: string): Promise<string> {
  next = { events };
  let said = '';
  for await (const part of await client().chat.completions.create({ model: 'test/m', stream: true, messages: [{ role: 'user', content: asked }] })) said += part.choices[0]?.delta?.content ?? '';
  return said;
}

async function responsesText(events: string[], asked: string): Promise<{ deltas: string; done: string[] }> {
  next = { events };
  let deltas = '';
  const done: string[] = [];
  for await (const event of await client().responses.create({ model: 'test/m', stream: true, input: asked })) {
    if (event.type === 'response.output_text.delta') deltas += event.delta;
    else done.push(JSON.stringify(event));
  }
  return { deltas, done };
}

describe('a key\'s kind is its provider\'s, not a word of its secret', () => {
  it('a chat stream that ends on the key\'s start past `sk-proj-`: the caller and the cassette get the kind, then the mask', async () => {
    const said = await chatContent([chunk([delta({ role: 'assistant', content: 'mine is ' })]), chunk([delta({ content: KEY.slice(0, 12) })]), chunk([delta({}, 'stop')])], 'chat ends on sk-proj-ab3_');
    expect(said).toBe(`mine is sk-proj-${MASK}`);
    expect(secretIn(tapesOf('chat ends on sk-proj-ab3_'))).toEqual([]);
  });

  it('a Responses stream that ends on it', async () => {
    const { deltas } = await responsesText([textDelta('mine is ', 1), textDelta(KEY.slice(0, 12), 2), ev({ type: 'response.content_part.done', sequence_number: 3, item_id: 'm1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } })], 'responses end on sk-proj-ab3_');
    expect(deltas).toBe(`mine is sk-proj-${MASK}`);
  });
});
