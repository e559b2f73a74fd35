import { connect } from 'node:net';
import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { round } from '../../src/emulator/models/models.js';
import { gatewayForAll } from '../support/gateway-for-all.js';
import { SETTLE } from '../support/until.js';

// Two streamed requests pipelined on one HTTP/1.1 connection, whose client then goes away. Node gives
// the second answer no socket until the first has ended, and says nothing to it when the connection
// closes: before, it never closed, the gateway relayed its upstream's stream to the end (here: for
// ever, the upstream holding it open), kept the hold, and a stop waited its 1 s bound for it.
const PROMPT_PRICE = 1e-6;
const COMPLETION_PRICE = 1e-4;
const SENT = 5;
/** The upstream's answers, and how many of them the gateway let go. */
const upstreamAnswers: ServerResponse[] = [];
let letGo = 0;
let answering: () => void = () => {};

const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'gen-up', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;

const gw = gatewayForAll({
  prefix: 'router-pipelined-',
  upstreams: { up: (_req, res) => {
    upstreamAnswers.push(res);
    res.on('close', () => letGo++);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant' }));
    for (let i = 0; i < SENT; i++) res.write(chunk({ content: `word${i} ` }));
    if (upstreamAnswers.length === 2) answering();
  } },
  providers: ({ up }) => `providers:\n  - { name: up, base_url: "${up}", models: { test/m: m }, prices: { test/m: { prompt: ${PROMPT_PRICE}, completion: ${COMPLETION_PRICE} } } }\n`,
});

describe('pipelined streams whose client goes away', () => {
  it('are each closed: the upstreams let go, only what was relayed charged, nothing left open for a stop', async () => {
    const { apiKey } = gw.gateway.store.createWorkspace('piped', 1);
    const closed: boolean[] = [];
    gw.gateway.server.on('request', (_req, res: ServerResponse) => {
      const at = closed.push(false) - 1;
      res.once('close', () => (closed[at] = true));
    });
    const body = JSON.stringify({ model: 'test/m', stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'part' }] });
    const request = `POST /api/v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const bothAnswering = new Promise<void>((resolve) => (answering = resolve));
    const socket = connect(gw.gateway.port, '127.0.0.1');
    let seen = '';
    const firstWords = new Promise<void>((resolve) =>
      socket.on('data', (d: Buffer) => {
        seen += d.toString();
        if ([...seen.matchAll(/"content":"word/g)].length >= SENT) resolve();
      }),
    );
    socket.on('error', () => {});
    socket.write(request + request);
    await bothAnswering;
    await firstWords;
    socket.destroy();

    // Before: the second answer never closed (closed = [true, false]), its upstream never let go (1).
    await vi.waitFor(() => expect(closed).toEqual([true, true]), SETTLE);
    await vi.waitFor(() => expect(letGo).toBe(2), SETTLE);
    // Each is charged as a cut stream: the prompt's text ("user: part", 3 tokens) and the words relayed.
    const owed = round(round(3 * PROMPT_PRICE) + round(SENT * COMPLETION_PRICE));
    await vi.waitFor(() => expect(gw.gateway.store.balance('piped')).toBeCloseTo(1 - 2 * owed, 10), SETTLE);
  });
});
