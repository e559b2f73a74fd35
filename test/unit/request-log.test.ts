import { describe, expect, it } from 'vitest';
import { LOG_BODY_BYTES } from '../../src/emulator/http/logged-request.js';
import { RequestLog } from '../../src/emulator/http/request-log.js';

const bytes = (text: string) => Buffer.from(text);

describe('the request log', () => {
  it('shows the headers less Authorization, the body parsed from its text once, and its JSON as before', () => {
    const log = new RequestLog();
    const headers = { authorization: 'Bearer secret', 'content-type': 'application/json', 'set-cookie': ['a', 'b'] };
    const entry = log.add('POST', '/v1/chat/completions', undefined, headers, 1_700_000_000_000);
    entry.workspace = 'default';
    const text = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi ✓' }] });
    entry.keepBody(bytes(text), Buffer.byteLength(text));
    const [shown] = log.entries();
    expect(shown!.headers).toEqual({ 'content-type': 'application/json' });
    expect(shown!.body).toEqual(JSON.parse(text));
    // The same object on every read of one entry: what one reader changes, the next sees.
    expect(shown!.body).toBe(shown!.body);
    expect(shown!.query).toEqual({});
    expect(JSON.parse(JSON.stringify(log.entries()[0]))).toEqual({ method: 'POST', path: '/v1/chat/completions', query: {}, headers: { 'content-type': 'application/json' }, body: JSON.parse(text), at: 1_700_000_000_000, workspace: 'default', bodyBytes: Buffer.byteLength(text) });
    expect(JSON.stringify(log.entries())).not.toContain('secret');
  });

  it('keeps a large body as its size, and counts each body once', () => {
    const log = new RequestLog();
    const entry = log.add('POST', '/v1/batches', { a: ['1'] }, {}, 0);
    entry.keepBody(bytes('{"x":1}'), 7);
    expect(log.entries()[0]!.body).toEqual({ x: 1 });
    entry.keepBody(undefined, LOG_BODY_BYTES + 1);
    const [shown] = log.entries();
    expect(shown!.body).toEqual({ truncated: true, bytes: LOG_BODY_BYTES + 1 });
    expect(shown!.bodyBytes).toBe(LOG_BODY_BYTES);
    expect(shown!.query).toEqual({ a: ['1'] });
    expect(JSON.stringify(log.add('GET', '/v1/models', undefined, {}, 1) && log.entries()[1])).toBe('{"method":"GET","path":"/v1/models","query":{},"headers":{},"at":1}');
  });

  it('shows every header as it came: values with colons, spaces and nothing, none at all', () => {
    const log = new RequestLog();
    const headers = { host: '127.0.0.1:8080', 'x-empty': '', 'user-agent': 'a b/1.0 (x; y)', 'x-title': 'name: value' };
    for (const h of [headers, { authorization: 'Bearer k' }, {}]) log.add('GET', '/v1/models', undefined, h, 0);
    expect(log.entries().map((e) => e.headers)).toEqual([headers, {}, {}]);
  });

  it('keeps the newest entries by count and by the bytes of their bodies, each whole, however many came', () => {
    const log = new RequestLog(5);
    for (let i = 0; i < 5_000; i++) {
      const entry = log.add('POST', '/v1/chat/completions', undefined, { 'x-n': String(i).repeat(i % 97) }, i);
      const text = JSON.stringify({ n: i, pad: 'p'.repeat((i * 7919) % 3000) });
      entry.keepBody(bytes(text), text.length);
    }
    const kept = log.entries();
    expect(kept.map((e) => e.at)).toEqual([4995, 4996, 4997, 4998, 4999]);
    for (const e of kept) {
      expect(e.headers).toEqual({ 'x-n': String(e.at).repeat(e.at % 97) });
      expect(e.body).toEqual({ n: e.at, pad: 'p'.repeat((e.at * 7919) % 3000) });
    }
    // Bodies past 16 MiB in all: the oldest go first, the newest always stays.
    const big = new RequestLog();
    for (let i = 0; i < 300; i++) big.add('POST', '/v1/embeddings', undefined, {}, i).keepBody(bytes(`"${'b'.repeat(LOG_BODY_BYTES - 2)}"`), LOG_BODY_BYTES);
    big.add('GET', '/v1/models', undefined, {}, 300);
    // 16 MiB of bodies (256 of them) and the newest.
    expect(big.entries().length).toBe(257);
    expect(big.entries().at(-1)!.at).toBe(300);
  });

  it('lets go of a workspace\'s entries, the others kept in order, each request in flight still finding its own', () => {
    const log = new RequestLog(10);
    const entries = ['a', 'b', 'a', 'b', 'a'].map((ws, i) => {
      const entry = log.add('POST', '/v1/chat/completions', undefined, {}, i);
      entry.workspace = ws;
      return entry;
    });
    log.remove((ws) => ws === 'a');
    expect(log.entries().map((e) => [e.at, e.workspace])).toEqual([[1, 'b'], [3, 'b']]);
    entries[3]!.keepBody(bytes('{"three":3}'), 11);
    // A request whose entry was let go changes no other.
    entries[2]!.keepBody(bytes('{"two":2}'), 9);
    entries[2]!.workspace = 'c';
    expect(log.entries().map((e) => [e.at, e.workspace, e.body])).toEqual([[1, 'b', undefined], [3, 'b', { three: 3 }]]);
    log.remove(() => true);
    expect(log.entries()).toEqual([]);
    log.add('GET', '/v1/models', undefined, {}, 9);
    expect(log.entries().map((e) => e.at)).toEqual([9]);
  });

  it('a request whose entry aged out while it ran writes over no newer one', () => {
    const log = new RequestLog(2);
    const old = log.add('POST', '/v1/chat/completions', undefined, {}, 0);
    log.add('GET', '/v1/models', undefined, {}, 1);
    log.add('GET', '/v1/models', undefined, {}, 2);
    old.workspace = 'x';
    old.keepBody(bytes('{"late":true}'), 13);
    expect(log.entries().map((e) => [e.at, e.workspace, e.body])).toEqual([[1, undefined, undefined], [2, undefined, undefined]]);
  });
});
