import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { SETTLE } from '../support/until.js';

// The relay's chunks under the gateway's model and provider, whatever members the upstream's chunks have.
/** Whoever waits for the held upstream's next request: given a promise of its connection's close. */
const heldWaiters: ((got: { closed: Promise<void> }) => void)[] = [];
/** Whoever waits for the whole upstream's next request: given the function that sends its answer. */
const wholeWaiters: ((answer: () => void) => void)[] = [];
const WHOLE_COST = 0.25;

const base = { id: 'gen-odd', object: 'chat.completion.chunk', created: 1 };
const delta = (content: string) => ({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const upstreamChunks = [
  { ...base, model: 'up-m', provider: 'up-p', ...delta('first') },
  { ...base, model: 'up-m', provider: 'up-p', ...delta(' "model":"up-m" and "provider":"up-p" in words') },
  { ...base, model: 'up-m', ...delta(' no provider here') },
  { ...base, ...delta(' no model here') },
  { ...base, model: 'up-m', provider: 'other', ...delta(' another provider') },
  { ...base, provider: 'up-p', model: 'up-m', nested: { model: 'up-m' }, ...delta(' a nested model') },
  { ...base, provider: 'up-p', nested: { model: 'up-m' }, ...delta(' a nested model only') },
  { ...delta(' choices first, as llama.cpp'), ...base, model: 'up-m', provider: 'up-p' },
  { ...base, model: 'up-m', provider: 'up-p', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  { ...base, model: 'up-m', provider: 'up-p', choices: [], usage: { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7, cost: 0.5 } },
];

const gw = gatewayForAll({
  prefix: 'router-relay-',
  upstreams: {
    odd: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of upstreamChunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end('data: [DONE]\n\n');
    },
    // Two tokens, then an event that is not JSON, all in one write (one read of the gateway's).
    torn: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(upstreamChunks[0])}\n\n`);
      setTimeout(() => res.end(`data: ${JSON.stringify({ ...base, model: 'up-m', ...delta(' second') })}\n\ndata: ${JSON.stringify({ ...base, model: 'up-m', ...delta(' third') })}\n\ndata: {"id":"gen-\n\n`), 20);
    },
    // A first token (streamed), then no more: it waits until the gateway lets it go.
    held: (_req, res) => {
      const closed = new Promise<void>((resolve) => res.on('close', () => resolve()));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(upstreamChunks[0])}\n\n`);
      heldWaiters.shift()?.({ closed });
    },
    // Nothing until the test lets it answer (whole): then an answer its usage prices at WHOLE_COST.
    whole: (_req, res) => {
      wholeWaiters.shift()?.(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'gen-whole', object: 'chat.completion', created: 1, model: 'up-m', choices: [{ index: 0, message: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3, cost: WHOLE_COST } }));
      });
    },
  },
  providers: (urls) => `providers:\n  - { name: odd, base_url: "${urls.odd}", models: { test/odd: up-m } }\n  - { name: torn, base_url: "${urls.torn}", models: { test/torn: up-m } }\n  - { name: held, base_url: "${urls.held}", models: { test/held: up-m } }\n  - { name: whole, base_url: "${urls.whole}", models: { test/whole: up-m } }\n`,
});

describe('a relayed stream', () => {
  it('carries each chunk under the gateway model id and provider slug, once, its words untouched', async () => {
    const before = gw.gateway.store.balance(gw.gateway.store.findKey(gw.apiKey)!.workspace);
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/odd', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    const datas = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(datas.at(-1)).toBe('[DONE]');
    const chunks = datas.slice(0, -1);
    expect(chunks).toHaveLength(upstreamChunks.length);
    chunks.forEach((text, i) => {
      const chunk = JSON.parse(text) as Record<string, any>;
      const sent = upstreamChunks[i] as Record<string, any>;
      // One provider member (a duplicate would parse as its last), the slug; the model renamed where there was one.
      expect(text.match(/"provider":/g)).toHaveLength(1);
      expect(chunk.provider).toBe('odd');
      expect(chunk.model).toBe(sent.model === undefined ? undefined : 'test/odd');
      expect(chunk.choices).toEqual(sent.choices);
      if (sent.nested) expect(chunk.nested).toEqual(sent.nested);
    });
    expect(before - gw.gateway.store.balance(gw.gateway.store.findKey(gw.apiKey)!.workspace)).toBeCloseTo(0.5, 10);
  });

  it('sends the tokens that came in one read with a broken event, then the error chunk (no prices: charged nothing)', async () => {
    const before = gw.gateway.store.balance(gw.gateway.store.findKey(gw.apiKey)!.workspace);
    const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/torn', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    const datas = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(datas.at(-1)).toBe('[DONE]');
    const chunks = datas.slice(0, -1).map((t) => JSON.parse(t) as Record<string, any>);
    expect(chunks.slice(0, 3).map((c) => c.choices[0].delta.content)).toEqual(['first', ' second', ' third']);
    expect(chunks).toHaveLength(4);
    expect(chunks[3]!.choices[0].finish_reason).toBe('error');
    expect(chunks[3]!.error.code).toBe(502);
    expect(gw.gateway.store.balance(gw.gateway.store.findKey(gw.apiKey)!.workspace)).toBe(before);
  });

  it('lets the upstream go when the caller hangs up before the end of a stream', async () => {
    const arrived = new Promise<{ closed: Promise<void> }>((resolve) => heldWaiters.push(resolve));
    const caller = new AbortController();
    const answer = fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/held', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    const { closed: upstreamClosed } = await arrived;
    const first = await (await answer).body!.getReader().read();
    expect(new TextDecoder().decode(first.value)).toContain('ROUTER PROCESSING');
    caller.abort();
    await answer.then((r) => r.text()).catch(() => undefined);
    // Without the gateway letting go, the upstream would wait for its timeout (minutes): the test's own fails first.
    await upstreamClosed;
  });

  // The upstream bills a whole answer in full, and so does the service: the gateway reads it to its end (bounded by the
  // provider's timeout_ms) and charges it, though its caller is gone (docs/gateway.md, Hang-ups).
  it('reads a whole answer to its end after its caller hangs up, and charges it', async () => {
    const workspace = gw.gateway.store.findKey(gw.apiKey)!.workspace;
    const before = gw.gateway.store.balance(workspace);
    const arrived = new Promise<() => void>((resolve) => wholeWaiters.push(resolve));
    const gatewayHeardCallerGo = new Promise((resolve) => gw.gateway.server.once('request', (_req, res: ServerResponse) => res.once('close', resolve)));
    const caller = new AbortController();
    const answer = fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', signal: caller.signal, headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/whole', messages: [{ role: 'user', content: 'hi' }] }) });
    const sendAnswer = await arrived;
    caller.abort();
    await expect(answer).rejects.toThrow();
    await gatewayHeardCallerGo;
    expect(gw.gateway.store.balance(workspace)).toBe(before);
    sendAnswer();
    await vi.waitFor(() => expect(gw.gateway.store.balance(workspace)).toBeCloseTo(before - WHOLE_COST, 9), SETTLE);
  });
});
