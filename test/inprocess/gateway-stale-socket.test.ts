import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testGateway } from '../support/upstreams.js';

// A request sent on a kept-alive connection just as the upstream closes it (an idle timeout that
// crosses it on the wire) was a 502 "connection lost": a paid request is never sent twice. But a
// connection that had answered before, lost with no byte of an answer, was closed by a server that
// had not read the request: it is now sent once more, on a new connection. One lost on a connection
// made for it is not (the server may have read it), nor is a request sent a third time.
const ANSWER = JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } });

interface Upstream {
  server: Server;
  /** What each request asked (its message), and whether it was dropped unanswered. */
  seen: { asked: string; nth: number; dropped: boolean }[];
  connections: number;
  port: number;
}

/**
 * A bare HTTP/1.1 server (a long Keep-Alive hint: the gateway keeps its connections). It drops (closes,
 * unanswered) the second request of each connection, and any request that asks "drop"; "rst" is reset.
 */
async function upstream(): Promise<Upstream> {
  const u: Upstream = { server: createServer(), seen: [], connections: 0, port: 0 };
  u.server.on('connection', (s: Socket) => {
    u.connections++;
    let nth = 0;
    let raw = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      raw = Buffer.concat([raw, d]);
      const head = raw.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(raw.subarray(0, head).toString())?.[1] ?? 0);
      if (head < 0 || raw.length < head + 4 + length) return;
      const body = JSON.parse(raw.subarray(head + 4, head + 4 + length).toString()) as { messages: { content: string }[] };
      raw = raw.subarray(head + 4 + length);
      const asked = body.messages[0]!.content;
      const dropped = ++nth === 2 || asked === 'drop';
      u.seen.push({ asked, nth, dropped });
      // "rst": reset (ECONNRESET at the gateway), else closed ("other side closed").
      if (dropped) return void (asked === 'rst' ? s.resetAndDestroy() : s.destroy());
      s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(ANSWER)}\r\nconnection: keep-alive\r\nkeep-alive: timeout=30\r\n\r\n${ANSWER}`);
    });
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => u.server.listen(0, '127.0.0.1', resolve));
  u.port = (u.server.address() as AddressInfo).port;
  return u;
}

let kept: Upstream;
let fresh: Upstream;
let gw: Awaited<ReturnType<typeof testGateway>>;

beforeAll(async () => {
  kept = await upstream();
  fresh = await upstream();
  gw = await testGateway(`providers:\n  - { name: kept, base_url: "http://127.0.0.1:${kept.port}/v1", models: { test/kept: m } }\n  - { name: fresh, base_url: "http://127.0.0.1:${fresh.port}/v1", models: { test/fresh: m } }\n`, 'stale-socket');
});
afterAll(async () => {
  await gw?.close();
  kept?.server.close();
  fresh?.server.close();
});

const ask = async (model: string, content: string) => {
  const res = await fetch(`${gw.gateway.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.gateway.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content }] }) });
  return { status: res.status, text: await res.text() };
};

describe('a request lost with its connection', () => {
  it('on a connection that had answered before: sent once more, on a new connection', async () => {
    expect((await ask('test/kept', 'one')).status).toBe(200);
    // Before: a 502 "kept: connection lost (other side closed)".
    const second = await ask('test/kept', 'two');
    expect(second.status).toBe(200);
    expect(kept.seen).toEqual([
      { asked: 'one', nth: 1, dropped: false },
      { asked: 'two', nth: 2, dropped: true },
      { asked: 'two', nth: 1, dropped: false },
    ]);
    expect(kept.connections).toBe(2);
  });

  it('sent once more at most: lost again, it is the 502', async () => {
    const seen = kept.seen.length;
    // A connection kept again (the one the retry had was closed after it), then lost under the next request.
    expect((await ask('test/kept', 'three')).status).toBe(200);
    const res = await ask('test/kept', 'drop');
    expect(res.status).toBe(502);
    expect(res.text).toContain('connection lost');
    expect(kept.seen.slice(seen)).toEqual([
      { asked: 'three', nth: 1, dropped: false },
      { asked: 'drop', nth: 2, dropped: true },
      { asked: 'drop', nth: 1, dropped: true },
    ]);
  });

  it('reset rather than closed: sent once more too', async () => {
    const seen = kept.seen.length;
    expect((await ask('test/kept', 'four')).status).toBe(200);
    expect((await ask('test/kept', 'rst')).status).toBe(200);
    expect(kept.seen.slice(seen)).toEqual([
      { asked: 'four', nth: 1, dropped: false },
      { asked: 'rst', nth: 2, dropped: true },
      { asked: 'rst', nth: 1, dropped: false },
    ]);
  });

  it('on a connection made for it: not sent again (the server may have read it)', async () => {
    const res = await ask('test/fresh', 'drop');
    expect(res.status).toBe(502);
    expect(res.text).toContain('connection lost');
    expect(fresh.seen).toEqual([{ asked: 'drop', nth: 1, dropped: true }]);
  });
});
