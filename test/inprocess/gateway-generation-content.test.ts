import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { breaking, type LocalUpstream } from '../support/upstreams.js';

// `GET /v1/generation/content` of an answer from a provider was a 404 (only the fake models' were
// kept): a gateway keeps what it relayed as the fake models keep theirs (the request's messages, the
// answer's text and reasoning, the error of a stream broken mid-way), in the same bounded memory.
/** The id the upstream gave an answer the caller knows by the gateway's id (the generation's `upstream_id`). */
const upstreamIdOf = (id: string): string => gateway.store.generation(id)!.data.upstream_id as string;

let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let late: LocalUpstream;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-gateway-content-'));
  upstream = await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 });
  late = await breaking(3);
  const yaml = `providers:
  - { name: up, base_url: "${upstream.apiRoot}/v1", api_key_env: UP_KEY, responses: true, models: { test/echo: local/echo, test/thinker: local/thinker } }
  - { name: late, base_url: "${late.baseUrl}", models: { test/late: m } }
`;
  gateway = await startEmulator({ stateDir: join(dir, 'gateway'), port: 0, gateway: { config: parseProviders(yaml, { UP_KEY: upstream.store.firstKeys().apiKey }) } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await late?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (body: unknown) => fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
async function content(e: Emulator, id: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${e.apiRoot}/v1/generation/content?id=${id}`, { headers: { authorization: `Bearer ${e.store.firstKeys().managementKey}` } });
  return { status: res.status, body: await res.json() };
}
/** A stream's id and the text of its content deltas. */
async function streamed(body: Record<string, unknown>): Promise<{ id: string; text: string; raw: string }> {
  const raw = await (await post({ ...body, stream: true })).text();
  const chunks = raw.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
  return { id: chunks[0].id, text: chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join(''), raw };
}

it('keeps a whole answer’s messages and text, as the upstream kept them', async () => {
  const messages = [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'whole answer please' }];
  const answer = (await (await post({ model: 'test/echo', messages })).json()) as any;
  const got = await content(gateway, answer.id);
  // Before: 404 "No stored content for generation gen-…".
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  expect(got.body.data).toEqual({ input: { messages }, output: { completion: answer.choices[0].message.content, reasoning: null }, error: null });
  expect(got.body.data.output).toEqual((await content(upstream, upstreamIdOf(answer.id))).body.data.output);
});

it('keeps a stream’s text as the caller got it, and its reasoning', async () => {
  const messages = [{ role: 'user', content: 'stream it to me' }];
  const s = await streamed({ model: 'test/echo', messages });
  const got = await content(gateway, s.id);
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  expect(got.body.data).toEqual({ input: { messages }, output: { completion: s.text, reasoning: null }, error: null });
  const thought = await streamed({ model: 'test/thinker', messages: [{ role: 'user', content: 'think first' }] });
  const kept = (await content(gateway, thought.id)).body.data.output;
  expect(kept.reasoning).toBeTruthy();
  expect(kept).toEqual((await content(upstream, upstreamIdOf(thought.id))).body.data.output);
});

it('keeps a stream the provider broke with its error and no completion, as a fake model’s cut by a fault', async () => {
  const s = await streamed({ model: 'test/late', messages: [{ role: 'user', content: 'break' }] });
  expect(s.raw).toContain('"finish_reason":"error"');
  const got = await content(gateway, s.id);
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  expect(got.body.data.output).toEqual({ completion: null, reasoning: null });
  expect(got.body.data.error).toMatchObject({ message: 'Provider returned an error mid-stream', provider_name: 'late', status: 502 });
});

it('keeps a Responses answer’s input and text, whole and streamed, as the upstream kept them', async () => {
  const ask = (stream: boolean) => fetch(`${gateway.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/echo', input: 'say it back', stream }) });
  const whole = (await (await ask(false)).json()) as any;
  const got = await content(gateway, whole.id);
  // Before: 404.
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  expect(got.body.data).toEqual({ input: { prompt: 'say it back' }, output: (await content(upstream, upstreamIdOf(whole.id))).body.data.output, error: null });
  expect(got.body.data.output.completion).toBeTruthy();
  const raw = await (await ask(true)).text();
  const done = raw.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((e) => e.type === 'response.completed');
  const streamedGot = await content(gateway, done.response.id);
  expect(streamedGot.status, JSON.stringify(streamedGot.body)).toBe(200);
  expect(streamedGot.body.data.output).toEqual((await content(upstream, upstreamIdOf(done.response.id))).body.data.output);
});

it('keeps a Responses answer’s reasoning, whole and streamed, as the upstream kept it', async () => {
  for (const stream of [false, true]) {
    const res = await fetch(`${gateway.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/thinker', input: 'why', stream }) });
    const answer = stream ? (await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).find((e) => e.type === 'response.completed').response : ((await res.json()) as any);
    const got = await content(gateway, answer.id);
    // Before: reasoning null at both.
    expect(got.body.data.output.reasoning).toBe(answer.output.find((i: { type: string }) => i.type === 'reasoning').summary[0].text);
    expect(got.body.data.output).toEqual((await content(upstream, upstreamIdOf(answer.id))).body.data.output);
  }
});
