import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A hostile (or echoing) upstream writes its own key back in pieces no single event holds whole, or
// encoded: the caller, the kept content, the request log and a cassette must never get it, and no
// other text may be lost. The gateway is `router serve --providers` over real HTTP; the caller the
// openai SDK, which joins a stream's deltas as any program does.
const KEY = 'sk-provider-secret-0123456789abcdef';
/** Another provider's key, of the characters a URL and JSON must escape (an Azure-style key). */
const OTHER = 'other/key+0123456789=abcdefXYZ';
const MASK = '[provider key]';
const b64 = (text: string) => Buffer.from(text).toString('base64');
/** Pieces that give a key away: each key, and the middle of each encoding an upstream may write it in. */
const TELLS = [KEY, OTHER, encodeURIComponent(OTHER), b64(`Bearer ${KEY}`).slice(12, 40), b64(`me:${KEY}`).slice(8, 36), b64(KEY).slice(4, 32), Buffer.from(KEY).toString('base64url').slice(4, 32), b64(`x:${OTHER}`).slice(8, 28)];
const leaked = (text: string) => TELLS.filter((tell) => text.includes(tell));

type Body = Record<string, unknown>;
const chunk = (choices: Body[]) => `data: ${JSON.stringify({ id: 'gen-hostile', object: 'chat.completion.chunk', created: 1, model: 'm', choices })}\n\n`;
const delta = (d: Body, index = 0, finish: string | null = null) => ({ index, delta: d, finish_reason: finish });

/** Each case: what the upstream streams (events, each written on its own), and what the caller must read. */
const STREAMS: Record<string, { events: string[]; said: string[] }> = {
  'split over two events': {
    // Plain chunks first: the relay frames those alike from their bytes, unparsed.
    events: [chunk([delta({ role: 'assistant', content: 'Hi' })]), chunk([delta({ content: ' there,' })]), chunk([delta({ content: ' my key is sk-provider-se' })]), chunk([delta({ content: 'cret-0123456789abcdef, ok' })]), chunk([delta({}, 0, 'stop')])],
    said: [`Hi there, my key is ${MASK}, ok`],
  },
  'split over three events, the last with the finish': {
    events: [chunk([delta({ role: 'assistant', content: 'a sk-' })]), chunk([delta({ content: 'provider-secret-' })]), chunk([delta({ content: '0123456789abcdef' }, 0, 'stop')])],
    // The key's kind (`sk-`) went out with the first event, before the rest came: the rest is masked.
    said: [`a sk-${MASK}`],
  },
  'then a key\'s start that never came whole, not lost': {
    events: [chunk([delta({ role: 'assistant', content: 'sk-provider-se' })]), chunk([delta({ content: 'cret-0123456789abcdef; see sk-pro' })]), chunk([delta({}, 0, 'stop')])],
    said: [`${MASK}; see sk-pro`],
  },
  'two choices, each splitting a key': {
    events: [chunk([delta({ role: 'assistant', content: 'A: sk-provider-' }, 0)]), chunk([delta({ role: 'assistant', content: 'B: sk-provider-secret' }, 1)]), chunk([delta({ content: 'secret-0123456789abcdef!' }, 0)]), chunk([delta({ content: '-0123456789abcdef?' }, 1)]), chunk([delta({}, 0, 'stop'), delta({}, 1, 'stop')])],
    said: [`A: ${MASK}!`, `B: ${MASK}?`],
  },
  'the other provider\'s key, JSON-escaped and split': {
    events: [chunk([delta({ role: 'assistant', content: 'theirs: other/ke' })]).replace('other/ke', 'other\\/\\u006be'), chunk([delta({ content: 'y+0123456789=abcdefXYZ.' })]), chunk([delta({}, 0, 'stop')])],
    said: [`theirs: ${MASK}.`],
  },
  'base64 of Bearer KEY, split': {
    events: [chunk([delta({ role: 'assistant', content: `sent ${b64(`Bearer ${KEY}`).slice(0, 20)}` })]), chunk([delta({ content: `${b64(`Bearer ${KEY}`).slice(20)} back` }, 0, 'stop')])],
    said: [],
  },
};

let dir: string;
let upstream: LocalUpstream;
let gateway: Emulator;
let recorder: Emulator;

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

/** Writes each event on its own, the next once the last went out (separate network reads, as a model's tokens come). */
async function stream(res: ServerResponse, events: string[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const event of [...events, 'data: [DONE]\n\n']) {
    await new Promise<void>((resolve) => res.write(event, () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  res.end();
}

const RESPONSE_DELTAS = ['key: sk-provider-se', 'cret-0123456789abcdef, done'];
const responseEvents = () => {
  const e = (x: Body) => `event: ${String(x.type)}\ndata: ${JSON.stringify(x)}\n\n`;
  const output = [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: RESPONSE_DELTAS.join(''), annotations: [] }] }];
  return [
    e({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', model: 'm', status: 'in_progress', output: [] } }),
    ...RESPONSE_DELTAS.map((d, i) => e({ type: 'response.output_text.delta', sequence_number: i + 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: d })),
    e({ type: 'response.output_text.done', sequence_number: 3, item_id: 'msg_1', output_index: 0, content_index: 0, text: RESPONSE_DELTAS.join('') }),
    // The final response echoes its instructions, where this upstream writes the key \u-escaped.
    e({ type: 'response.completed', sequence_number: 4, response: { id: 'resp_1', object: 'response', model: 'm', status: 'completed', instructions: 'use ESCAPED', output, usage: { input_tokens: 2, output_tokens: 4, total_tokens: 6 } } }).replace('ESCAPED', `\\u0073${KEY.slice(1)}`),
  ];
};

/** A whole answer's content: the keys base64'd as Basic and Bearer credentials, percent-encoded, \u-escaped. */
const WHOLE = `Basic ${b64(`me:${KEY}`)}; Bearer ${b64(`Bearer ${KEY}`)}; url ?k=${encodeURIComponent(OTHER)}; plain ${KEY.slice(0, 3)}\u0000${KEY.slice(3)}; escaped KEY`;
const wholeText = () => JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: WHOLE.replace('\u0000', '') }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } }).replace('escaped KEY', `escaped \\u0073${KEY.slice(1)}`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-key-split-'));
  upstream = await localUpstream((req, res, body) => {
    const asked = String((body.messages as { content: string }[] | undefined)?.[0]?.content ?? body.input ?? '');
    if (req.url!.endsWith('/responses')) return void stream(res, responseEvents());
    if (asked === 'refuse') return answer(res, 400, JSON.stringify({ error: { message: `bad auth: Authorization: Basic ${b64(`me:${KEY}`)} (Bearer ${b64(`Bearer ${KEY}`)}) from ?api_key=${encodeURIComponent(OTHER)}` } }));
    if (body.stream !== true) return answer(res, 200, wholeText());
    void stream(res, STREAMS[asked]!.events);
  });
  const yaml = `providers:\n  - { name: up, responses: true, base_url: "${upstream.baseUrl}", api_key_env: UP_KEY, models: { test/m: m } }\n  - { name: other, base_url: "${upstream.baseUrl}", api_key_env: OTHER_KEY, models: { test/o: o } }\n`;
  const env = { UP_KEY: KEY, OTHER_KEY: OTHER };
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, env) } });
  recorder = await startEmulator({ stateDir: join(dir, 'recorder'), port: 0, gateway: { config: parseProviders(yaml, env), cassettes: { dir: join(dir, 'tapes'), mode: 'record' } } });
});

afterAll(async () => {
  await gateway?.close();
  await recorder?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const clientOf = (e: Emulator) => new OpenAI({ apiKey: e.store.firstKeys().apiKey, baseURL: `${e.apiRoot}/v1`, maxRetries: 0, timeout: 20_000 });
const keptContent = async (e: Emulator, id: string) =>
  ((await (await fetch(`${e.apiRoot}/v1/generation/content?id=${id}`, { headers: { authorization: `Bearer ${e.store.firstKeys().managementKey}` } })).json()) as { data: { output: { completion: string } } }).data.output.completion;
/** The request log's text, emptied after each read: each case reads its own requests. */
async function requestLog(e: Emulator): Promise<string> {
  const url = `${e.apiRoot}/_emulator/requests`;
  const headers = { authorization: `Bearer ${e.store.firstKeys().managementKey}` };
  const text = await (await fetch(url, { headers })).text();
  expect((await fetch(url, { method: 'DELETE', headers })).ok).toBe(true);
  return text;
}

/** A chat stream read with the SDK: each choice's content joined, as a program shows it; then the conversation goes on with it. */
async function chatStream(e: Emulator, name: string): Promise<{ texts: string[]; id: string }> {
  await requestLog(e);
  const client = clientOf(e);
  const texts: string[] = [];
  let id = '';
  for await (const part of await client.chat.completions.create({ model: 'test/m', stream: true, n: STREAMS[name]!.said.length > 1 ? 2 : 1, messages: [{ role: 'user', content: name }] })) {
    id = part.id;
    for (const choice of part.choices) texts[choice.index] = (texts[choice.index] ?? '') + (choice.delta?.content ?? '');
  }
  // The next turn sends the answer back, as a chat program does: the request log keeps it.
  await client.chat.completions.create({ model: 'test/o', messages: [{ role: 'user', content: 'refuse' }, { role: 'assistant', content: texts.join('\n') }, { role: 'user', content: 'and?' }] }).catch(() => undefined);
  return { texts, id };
}

describe('a provider key an upstream splits between stream events or encodes', () => {
  it.each(Object.keys(STREAMS))('chat stream, %s: never joined whole at the caller, in the kept content or the request log; nothing else lost', async (name) => {
    const { texts, id } = await chatStream(gateway, name);
    const joined = texts.join('\n');
    expect(leaked(joined)).toEqual([]);
    if (STREAMS[name]!.said.length) expect(texts).toEqual(STREAMS[name]!.said);
    else expect(joined).toContain(MASK);
    expect(leaked(await keptContent(gateway, id))).toEqual([]);
    expect(leaked(await requestLog(gateway))).toEqual([]);
  });

  it('Responses stream split between two deltas: the deltas joined and the final text hide it', async () => {
    const events = await clientOf(gateway).responses.create({ model: 'test/m', input: 'your key?', stream: true });
    let deltas = '';
    let final = '';
    for await (const event of events) {
      if (event.type === 'response.output_text.delta') deltas += event.delta;
      if (event.type === 'response.completed') final = JSON.stringify(event.response);
    }
    expect(deltas).toBe(`key: ${MASK}, done`);
    expect(final).toContain(`key: ${MASK}, done`);
    expect(leaked(final)).toEqual([]);
    expect(final).toContain(`"instructions":"use ${MASK}"`);
  });

  it('a whole answer: base64 Basic and Bearer credentials, percent-encoded and \\u-escaped keys hidden', async () => {
    const got = await clientOf(gateway).chat.completions.create({ model: 'test/m', messages: [{ role: 'user', content: 'whole' }] });
    const content = got.choices[0]!.message.content!;
    expect(leaked(content)).toEqual([]);
    expect(content).toContain(`escaped ${MASK}`);
    expect(content).toContain(`plain ${MASK}`);
    expect(content.split(MASK).length - 1).toBe(5);
  });

  it('an upstream\'s refusal (400) with encoded keys: the caller\'s error hides them', async () => {
    const err = (await clientOf(gateway).chat.completions.create({ model: 'test/o', messages: [{ role: 'user', content: 'refuse' }] }).catch((e: unknown) => e)) as { status: number; message: string };
    expect(err.status).toBe(400);
    expect(leaked(err.message)).toEqual([]);
    expect(err.message).toContain('bad auth');
  });

  it('--record: the cassettes keep every such answer without a key, split or encoded', async () => {
    for (const name of Object.keys(STREAMS)) await chatStream(recorder, name);
    await clientOf(recorder).chat.completions.create({ model: 'test/m', messages: [{ role: 'user', content: 'whole' }] });
    for await (const _ of await clientOf(recorder).responses.create({ model: 'test/m', input: 'your key?', stream: true }));
    await recorder.close();
    const files = readdirSync(join(dir, 'tapes'));
    expect(files.length).toBeGreaterThanOrEqual(Object.keys(STREAMS).length + 2);
    for (const file of files) {
      const tape = JSON.parse(readFileSync(join(dir, 'tapes', file), 'utf8')) as { response: { chunks?: { data: unknown }[]; body?: unknown } };
      // Each recorded stream's texts joined per choice and delta stream, as a replay's caller would join them.
      const joined = new Map<string, string>();
      for (const { data } of tape.response.chunks ?? []) {
        const event = data as { choices?: { index: number; delta?: { content?: string } }[]; type?: string; delta?: string };
        for (const c of event.choices ?? []) joined.set(`c${c.index}`, (joined.get(`c${c.index}`) ?? '') + (c.delta?.content ?? ''));
        if (event.type?.endsWith('.delta')) joined.set(event.type, (joined.get(event.type) ?? '') + event.delta);
      }
      expect(leaked([...joined.values()].join('\n') + JSON.stringify(tape))).toEqual([]);
    }
    // Replayed with the upstream gone: the same texts, without the keys (`responses: true` as recorded: a Responses cassette of a provider without it is refused).
    const player = await startEmulator({ stateDir: join(dir, 'player'), port: 0, gateway: { config: parseProviders(`providers:\n  - { name: up, responses: true, base_url: "http://127.0.0.1:9/v1", api_key_env: UP_KEY, models: { test/m: m } }\n  - { name: other, base_url: "http://127.0.0.1:9/v1", api_key_env: OTHER_KEY, models: { test/o: o } }\n`, { UP_KEY: KEY, OTHER_KEY: OTHER }), cassettes: { dir: join(dir, 'tapes'), mode: 'replay', timing: 0 } } });
    try {
      for (const name of Object.keys(STREAMS)) {
        const { texts } = await chatStream(player, name);
        expect(leaked(texts.join('\n'))).toEqual([]);
        if (STREAMS[name]!.said.length) expect(texts).toEqual(STREAMS[name]!.said);
      }
    } finally {
      await player.close();
    }
  });
});
