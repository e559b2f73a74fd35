import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { localUpstream, testGateway, type LocalUpstream } from '../support/upstreams.js';
import { SETTLE } from '../support/until.js';

// Two callers on one key racing the last credits through the gateway, streamed and not, one of them hanging up on
// its whole answer mid-wait (charged it all the same: docs/gateway.md, Hang-ups). Unpriced, each answer costs the
// upstream's `usage.cost`, more than is left: the answers held together, then let go at once. The bound
// (docs/gateway.md, Credits): the balance never goes below zero; what answers cost past it is not charged.
const COST = 0.0008;
const CREDITS = 0.001;
let upstream: LocalUpstream;
let gateway: Emulator;
let closeGateway: () => Promise<void>;
const waiting: { res: ServerResponse; stream: boolean }[] = [];

const answer = ({ res, stream }: { res: ServerResponse; stream: boolean }) => {
  const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, cost: COST };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ id: 'u', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'a b c d' }, finish_reason: 'stop' }], usage }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`data: ${JSON.stringify({ id: 'u', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'a b c d' }, finish_reason: 'stop' }] })}\n\n`);
  res.end(`data: ${JSON.stringify({ id: 'u', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage })}\n\ndata: [DONE]\n\n`);
};

beforeAll(async () => {
  upstream = await localUpstream((_req, res, body) => waiting.push({ res, stream: body.stream === true }));
  ({ gateway, close: closeGateway } = await testGateway(`providers:\n  - { name: up, base_url: "${upstream.baseUrl}", models: { test/m: m } }\n`, 'last-credits'));
});

afterAll(async () => {
  await closeGateway?.();
  await upstream?.close();
});

const post = (key: string, stream: boolean, signal?: AbortSignal) =>
  fetch(`${gateway.apiRoot}/v1/chat/completions`, { method: 'POST', signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/m', stream, messages: [{ role: 'user', content: 'hi' }] }) });

describe('two callers on one key racing its last credits', () => {
  it.each([
    ['both streamed', true, true, false],
    ['both not streamed', false, false, false],
    ['one of each', true, false, false],
    ['one not streamed hangs up mid-wait', true, false, true],
  ])('%s: never below zero, what is left charged once', async (name, first, second, hangUp) => {
    const ws = `last-${name.replace(/ /g, '-')}`;
    const { apiKey } = gateway.store.createWorkspace(ws, CREDITS);
    const caller = new AbortController();
    const heard = new Promise<void>((resolve) => {
      let n = 0;
      gateway.server.on('request', function seen(_req, res: ServerResponse) {
        if (++n === 2) gateway.server.off('request', seen);
        if (n === 2) res.once('close', resolve);
      });
    });
    const one = post(apiKey, first).then((r) => r.text());
    await vi.waitFor(() => expect(waiting).toHaveLength(1), SETTLE);
    const two = post(apiKey, second, caller.signal).then((r) => r.text());
    await vi.waitFor(() => expect(waiting).toHaveLength(2), SETTLE);
    if (hangUp) {
      caller.abort();
      await expect(two).rejects.toThrow();
      await heard;
    }
    waiting.splice(0).forEach(answer);
    await one;
    if (!hangUp) await two;
    await vi.waitFor(() => expect([...gateway.store.allGenerations()].filter((g) => g.workspace === ws)).toHaveLength(2), SETTLE);
    const charged = [...gateway.store.allGenerations()].filter((g) => g.workspace === ws).map((g) => g.data.total_cost as number);
    // The first settled pays its whole cost; the second what is left (0.0002), not its 0.0008.
    expect(charged.sort()).toEqual([0.0002, COST]);
    expect(gateway.store.balance(ws)).toBe(0);
  });
});
