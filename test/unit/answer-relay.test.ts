import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { AnswerRelay } from '../../src/emulator/providers/answer-relay.js';
import { bytesOf, keyBytes } from '../../src/emulator/providers/key-scrub.js';
import { upstreamCall } from '../../src/emulator/providers/upstream-call.js';

const KEY = 'sk-provider-secret-0123456789abcdef';
const endsAnswer = (data: string) => data.includes('"usage"');

describe('a request through its AnswerRelay', () => {
  let server: Server;
  let origin: string;
  const agent = new Agent();
  beforeAll(async () => {
    // A stream that says the key cut across two writes and ends after its usage chunk without [DONE].
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"content":"a ${KEY.slice(0, 9)}`);
      setTimeout(() => res.end(`${KEY.slice(9)} b"}\n\ndata: {"usage":{"total_tokens":3}}\n\n`), 20);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await agent.close();
    server.close();
  });

  it('hides the key, adds the [DONE] left out, and is the one object the request makes for both', async () => {
    const keys = keyBytes([KEY]);
    const relay = new AnswerRelay(agent, keys, bytesOf(keys), endsAnswer, true);
    // No function of its own but the rule it was given: its steps are the prototype's, not closures a request.
    expect(Object.values(relay).filter((v) => typeof v === 'function')).toEqual([endsAnswer]);
    const reply = await upstreamCall(relay, { origin, path: '/', headers: {}, body: '{}', signal: new AbortController().signal, name: 'up', stream: true, ends: relay, maxAnswer: 1024 * 1024 });
    if (reply.kind !== 'stream') throw new Error(reply.kind);
    const got: string[] = [];
    for await (const data of reply.events) got.push(data);
    expect(got).toEqual(['{"content":"a [provider key] b"}', '{"usage":{"total_tokens":3}}', '[DONE]']);
  });
});
