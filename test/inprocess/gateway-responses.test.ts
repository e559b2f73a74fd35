import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { startGatewayChain, type GatewayChain } from '../support/gateway-chain.js';
import { parseProviders, ProvidersFileError } from '../../src/emulator/providers/config.js';
import { checkDriftAll } from '../../src/emulator/providers/drift.js';
import { deadPort, failing, localUpstream, type LocalUpstream, withoutGatewayIds } from '../support/upstreams.js';

// `POST /v1/responses` through upstreams that have it (`responses: true`): another emulator spoken to
// only over HTTP, and small servers that refuse, fail and break their streams.
let chain: GatewayChain;
let dir: string;
let upstream: Emulator;
let gateway: Emulator;
let key: string;
let locals: LocalUpstream[];

const created = (n: number) => `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: n, response: { id: 'resp_x', object: 'response', model: 'm', status: 'in_progress', output: [] } })}\n\n`;
const delta = (n: number, text: string) => `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', sequence_number: n, item_id: 'msg_x', output_index: 0, content_index: 0, delta: text })}\n\n`;
/** A Responses stream that sends `deltas` pieces of text after its head, then drops the connection. */
const breakingResponses = (deltas: number) =>
  localUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(created(0));
    for (let i = 0; i < deltas; i++) res.write(delta(i + 1, `piece${i} `));
    setTimeout(() => res.destroy(), 20);
  });

beforeAll(async () => {
  const five = await failing(503);
  const early = await breakingResponses(0);
  const late = await breakingResponses(2);
  locals = [five, early, late];
  const dead = await deadPort();
  const yaml = (upstreamRoot: string) => `
providers:
  - { name: dead, responses: true, base_url: "http://127.0.0.1:${dead}/v1", models: { test/resp: local/echo } }
  - { name: five, responses: true, base_url: "${five.baseUrl}", models: { test/resp: local/echo } }
  - { name: early-break, responses: true, base_url: "${early.baseUrl}", models: { test/resp: local/echo } }
  - name: up
    responses: true
    base_url: ${upstreamRoot}/v1
    api_key_env: UP_KEY
    models: { test/resp: local/echo, test/chat-only: local/echo }
    prices: { test/resp: { prompt: 0.001, completion: 0.002 } }
  - { name: late-break, responses: true, base_url: "${late.baseUrl}", models: { test/late: m } }
`;
  chain = await startGatewayChain('gateway-responses', yaml, { locals });
  ({ dir, upstream, gateway, key } = chain);
});

afterAll(() => chain?.close());

async function post(e: Emulator, body: unknown, k = key) {
  const res = await fetch(`${e.apiRoot}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: (res.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as any) : undefined };
}
/** Each event of a stream: its `event:` name and its data. */
const events = (sse: string) =>
  sse
    .split('\n\n')
    .filter((e) => e.includes('data: '))
    .map((e) => ({ name: /^event: (.*)$/m.exec(e)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(e)![1]!) as any }));
const balance = () => gateway.store.balance(gateway.store.findKey(key)!.workspace);
const direct = () => post(upstream, { model: 'local/echo', input: 'tell me about tides' }, chain.upKey);

describe('Responses through providers', () => {
  it('answers whole from the upstream under the gateway model id, priced and charged', async () => {
    const expected = await direct();
    const before = balance();
    const via = await post(gateway, { model: 'test/resp', input: 'tell me about tides', provider: { only: ['up'] } });
    expect(via.status).toBe(200);
    expect(via.json.object).toBe('response');
    expect(via.json.model).toBe('test/resp');
    expect(via.json.output_text).toBe(expected.json.output_text);
    const { input_tokens, output_tokens } = via.json.usage;
    const cost = input_tokens * 0.001 + output_tokens * 0.002;
    expect(via.json.usage.cost).toBeCloseTo(cost, 10);
    expect(before - balance()).toBeCloseTo(cost, 10);
  });

  it('passes over a refused, a 5xx and an early-breaking provider, whole and streamed', async () => {
    const expected = (await direct()).json.output_text;
    const whole = await post(gateway, { model: 'test/resp', input: 'tell me about tides' });
    expect(whole.status).toBe(200);
    expect(whole.json.output_text).toBe(expected);

    const [fiveAsked, earlyAsked] = [locals[0]!.seen.length, locals[1]!.seen.length];
    const streamed = await post(gateway, { model: 'test/resp', input: 'tell me about tides', stream: true });
    expect(streamed.status).toBe(200);
    expect([locals[0]!.seen.length, locals[1]!.seen.length]).toEqual([fiveAsked + 1, earlyAsked + 1]);
    const got = events(streamed.text);
    for (const e of got) expect(e.name).toBe(e.data.type);
    expect(got[0]!.name).toBe('response.created');
    const last = got.at(-1)!;
    expect(last.name).toBe('response.completed');
    expect(last.data.response.model).toBe('test/resp');
    expect(last.data.response.usage.cost).toBeGreaterThan(0);
    const text = got.filter((e) => e.name === 'response.output_text.delta').map((e) => e.data.delta).join('');
    expect(text).toBe(expected);
  });

  it('ends a stream broken after its first output with response.failed, never a clean end (no prices: charged nothing)', async () => {
    const before = balance();
    const broken = await post(gateway, { model: 'test/late', input: 'hi', stream: true });
    expect(broken.status).toBe(200);
    const got = events(broken.text);
    expect(got.filter((e) => e.name === 'response.output_text.delta').map((e) => e.data.delta)).toEqual(['piece0 ', 'piece1 ']);
    expect(got.some((e) => e.name === 'response.completed')).toBe(false);
    const last = got.at(-1)!;
    expect([last.name, last.data.response.status, last.data.response.model]).toEqual(['response.failed', 'failed', 'test/late']);
    expect(last.data.response.error.message).toMatch(/mid-stream/);
    expect(balance()).toBe(before);
  });

  it('answers 502 naming each failure when no provider could', async () => {
    const none = await post(gateway, { model: 'test/resp', input: 'hi', provider: { only: ['dead', 'five'] } });
    expect(none.status).toBe(502);
    expect(none.json.error.message).toMatch(/dead: connection refused.*five: HTTP 503/);
  });

  it('leaves the fake models as they were', async () => {
    const local = await post(gateway, { model: 'local/echo', input: 'tell me about tides' });
    expect(local.status).toBe(200);
    expect(local.json.model).toBe('local/echo');
    expect(local.json.output_text).toBe((await direct()).json.output_text);
  });

  it('records a Responses exchange and replays it byte for byte with the upstream gone', async () => {
    const cassettes = join(dir, 'cassettes');
    const only = (baseUrl: string) => parseProviders(`providers:\n  - { name: up, responses: true, base_url: "${baseUrl}", api_key_env: UP_KEY, models: { test/resp: local/echo } }\n`, { UP_KEY: chain.upKey });
    const recorder = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: only(`${upstream.apiRoot}/v1`), cassettes: { dir: cassettes, mode: 'record' } } });
    const ask = (e: Emulator, stream: boolean) => post(e, { model: 'test/resp', input: 'record me', stream }, e.store.firstKeys().apiKey);
    let recorded: Awaited<ReturnType<typeof post>>[];
    try {
      recorded = [await ask(recorder, false), await ask(recorder, true)];
    } finally {
      await recorder.close();
    }
    const player = await startEmulator({ stateDir: join(dir, 'play'), port: 0, gateway: { config: only(`http://127.0.0.1:${await deadPort()}/v1`), cassettes: { dir: cassettes, mode: 'replay' } } });
    try {
      const replayed = [await ask(player, false), await ask(player, true)];
      expect(replayed.map((r) => r.status)).toEqual([200, 200]);
      expect(withoutGatewayIds(replayed[0]!.text)).toBe(withoutGatewayIds(recorded[0]!.text));
      expect(withoutGatewayIds(replayed[1]!.text)).toBe(withoutGatewayIds(recorded[1]!.text));
      const miss = await post(player, { model: 'test/resp', input: 'never recorded' }, player.store.firstKeys().apiKey);
      expect(miss.status).toBe(404);
      expect(miss.json.error.message).toMatch(/replay: no cassette answers this request to up.*differs in input/);
    } finally {
      await player.close();
    }
    // Asked again at /responses (not /chat/completions), the upstream answers in the same shape.
    const drift = await checkDriftAll(cassettes, only(`${upstream.apiRoot}/v1`), () => {});
    expect(drift.map((r) => [r.error, r.changes])).toEqual([
      [undefined, []],
      [undefined, []],
    ]);
  });

  it('takes `responses` as true or false only', () => {
    expect(() => parseProviders('providers:\n  - { name: a, responses: "yes", base_url: "http://127.0.0.1:1/v1", models: { t/m: m } }\n', {})).toThrow(ProvidersFileError);
  });
});
