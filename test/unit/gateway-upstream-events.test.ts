import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamEvents, upstreamCall } from '../../src/emulator/providers/upstream-call.js';
import { TAKEN } from '../../src/emulator/providers/upstream-events.js';
import { ProviderFailure } from '../../src/emulator/providers/types.js';

/** The hold undici's raw handler gives: what the events asked of it. */
function controller() {
  const calls: string[] = [];
  return { calls, pause: () => calls.push('pause'), resume: () => calls.push('resume'), abort: () => calls.push('abort') } as unknown as ConstructorParameters<typeof UpstreamEvents>[0] & { calls: string[] };
}
const done = { ends: (data: string) => data === '[DONE]' };
/** The payloads already queued, given at once (eachQueued). */
const queued = (events: UpstreamEvents) => {
  const out: string[] = [];
  events.eachQueued((data) => out.push(data) < 0);
  return out;
};
const frames = (...data: string[]) => Buffer.from(data.map((d) => `data: ${d}\n\n`).join(''));

describe("an upstream's events as undici's raw handler hands them over", () => {
  it('gives the events of one read at once after the first: one wake-up per read, not per event', async () => {
    const c = controller();
    const events = new UpstreamEvents(c, 'up', done);
    events.push(frames('1', '2', '3'));
    expect(await events.next()).toEqual({ value: '1', done: false });
    expect(queued(events)).toEqual(['2', '3']);
    expect(queued(events)).toEqual([]);
    events.push(frames('[DONE]'));
    events.end();
    expect(await events.next()).toEqual({ value: '[DONE]', done: false });
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it('tells a polling reader once, on a tick of its own, when reads bring events, the end or a break', async () => {
    const events = new UpstreamEvents(controller(), 'up', done);
    let told = 0;
    const ready = () => told++;
    const tick = () => new Promise((resolve) => process.nextTick(resolve));
    expect(events.poll(ready)).toBe('waiting');
    // Two reads in one turn (one network read's chunks): one call, after both.
    events.push(frames('1'));
    events.push(frames('2', '3'));
    expect(told).toBe(0);
    await tick();
    expect(told).toBe(1);
    expect(events.poll(ready)).toBe('queued');
    expect(queued(events)).toEqual(['1', '2', '3']);
    // A piece that completes no event tells nothing.
    expect(events.poll(ready)).toBe('waiting');
    events.push(Buffer.from('data: [DO'));
    await tick();
    expect(told).toBe(1);
    events.push(Buffer.from('NE]\n\n'));
    events.end();
    await tick();
    expect(told).toBe(2);
    expect(queued(events)).toEqual(['[DONE]']);
    expect(events.poll(ready)).toBe('ended');

    const broken = new UpstreamEvents(controller(), 'up', done);
    expect(broken.poll(ready)).toBe('waiting');
    broken.fail(new ProviderFailure('broken', 'up: cut'));
    await tick();
    expect(told).toBe(3);
    expect(() => broken.poll(ready)).toThrow('up: cut');
  });

  it('gives the parse of the events it judged for first_event_timeout_ms once, to the relay, which parses them no more', async () => {
    const events = new UpstreamEvents(controller(), 'up', done, Infinity, 60_000);
    const role = '{"choices":[{"delta":{"role":"assistant"}}]}';
    const content = '{"choices":[{"delta":{"content":"hi"}}]}';
    events.push(frames(role, content, '{"choices":[{"delta":{"content":" there"}}]}', '[DONE]'));
    events.end();
    // The last judged: the first with some of the answer (those after it are not parsed here).
    expect(events.takeParsed(role)).toBeUndefined();
    expect(events.takeParsed(content)).toEqual(JSON.parse(content));
    expect(events.takeParsed(content)).toBeUndefined();
    expect(events.takeParsed('{"choices":[{"delta":{"content":" there"}}]}')).toBeUndefined();
  });

  it('answers a reader already waiting: with the first event of a read, the end, or the break', async () => {
    const events = new UpstreamEvents(controller(), 'up', done);
    const first = events.next();
    events.push(Buffer.from('data: 1'));
    events.push(Buffer.from('\n\ndata: 2\n\n'));
    expect(await first).toEqual({ value: '1', done: false });
    expect(queued(events)).toEqual(['2']);
    const last = events.next();
    events.push(frames('[DONE]'));
    expect(await last).toEqual({ value: '[DONE]', done: false });
    const end = events.next();
    events.end();
    expect(await end).toEqual({ value: undefined, done: true });

    const broken = new UpstreamEvents(controller(), 'up', done);
    const waiting = broken.next();
    broken.fail(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await expect(waiting).rejects.toMatchObject({ reason: 'broken' });
  });

  it('keeps events in the bytes they came in, and asks its reader to take each from them in its turn, else decodes it', async () => {
    const events = new UpstreamEvents(controller(), 'up', done);
    const taken: string[] = [];
    let takes = true;
    events.takeBytes = (piece, start, end) => {
      const data = piece.toString('utf8', start, end);
      return takes && data.startsWith('{') && taken.push(data) > 0;
    };
    // The first read is decoded whole (a BOM to drop).
    events.push(Buffer.from(': open\n\n'));
    events.push(frames('{"a":1}', 'text', '{"b":2}'));
    events.push(frames('{"c":3}'));
    // Nothing taken before it is read: then in its turn, among those decoded.
    expect(taken).toEqual([]);
    expect(await events.next()).toEqual({ value: TAKEN, done: false });
    expect(taken).toEqual(['{"a":1}']);
    const seen: string[] = [];
    expect(events.eachQueued((data) => seen.push(`${data === TAKEN ? 'taken' : data} after ${taken.length}`) < 0)).toBe(false);
    expect(seen).toEqual(['text after 1', 'taken after 2', 'taken after 3']);
    // One it does not take when read: decoded for it instead; the end found among those still in their bytes.
    events.push(frames('{"d":4}', '[DONE]'));
    takes = false;
    events.end();
    expect(await events.next()).toEqual({ value: '{"d":4}', done: false });
    expect(await events.next()).toEqual({ value: '[DONE]', done: false });
    expect(await events.next()).toEqual({ value: undefined, done: true });
    // A reader that says the stream is over: those after it dropped.
    const over = new UpstreamEvents(controller(), 'up', done);
    over.push(frames('1', '2', '3', '[DONE]'));
    over.end();
    expect(await over.next()).toEqual({ value: '1', done: false });
    expect(over.eachQueued((data) => data === '2')).toBe(true);
    expect(queued(over)).toEqual([]);
  });

  it('pauses the upstream while 64 events wait unread, and resumes it once they are taken', () => {
    const c = controller();
    const events = new UpstreamEvents(c, 'up', done);
    events.push(frames(...Array.from({ length: 64 }, (_, i) => String(i))));
    expect(c.calls).toEqual(['pause']);
    expect(queued(events)).toHaveLength(64);
    expect(c.calls).toEqual(['pause', 'resume']);
  });

  it('breaks when the body ends before [DONE], after the events that came', async () => {
    const events = new UpstreamEvents(controller(), 'up', done);
    events.push(frames('1'));
    events.end();
    expect(await events.next()).toEqual({ value: '1', done: false });
    await expect(events.next()).rejects.toThrow(ProviderFailure);
  });

  it('lets go of the upstream at an event larger than its bound, after the events before it', async () => {
    const c = controller();
    const events = new UpstreamEvents(c, 'up', done, 16);
    events.push(frames('1'));
    events.push(Buffer.from(`data: ${'x'.repeat(32)}`));
    expect(c.calls).toEqual(['abort']);
    expect(await events.next()).toEqual({ value: '1', done: false });
    await expect(events.next()).rejects.toMatchObject({ reason: 'broken', message: 'up: stream broken (an event larger than 16 characters)' });
  });

  it('lets go of the upstream when its reader stops early, but not once [DONE] came (the connection is kept)', async () => {
    const early = controller();
    const a = new UpstreamEvents(early, 'up', done);
    a.push(frames('1'));
    await a.return();
    expect(early.calls).toEqual(['abort']);
    const late = controller();
    const b = new UpstreamEvents(late, 'up', done);
    b.push(frames('1', '[DONE]'));
    await b.return();
    expect(late.calls).toEqual([]);
  });
});

describe('a call to an upstream through the raw handler', () => {
  let server: Server;
  let origin: string;
  const agent = new Agent();
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/busy') {
        res.writeHead(503, { 'content-type': 'application/json' });
        return res.end('{"error":"busy"}');
      }
      if (req.url === '/limited') {
        // A refusal whose body never ends: its first bytes are its words, the rest is not waited for.
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
        return res.write(`{"error":"slow down"}${' '.repeat(8192)}`);
      }
      if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(`{"choices":[],"pad":"${'a'.repeat(2 * 1024 * 1024)}"}`);
      }
      if (req.url === '/huge-event') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return res.end(`data: {"a":1}\n\ndata: {"pad":"${'a'.repeat(2 * 1024 * 1024)}"}\n\ndata: [DONE]\n\n`);
      }
      if (req.url === '/cut') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"a":1}\n\n');
        return setTimeout(() => res.destroy(), 20);
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'set-cookie': 'secret=1' });
      res.end('data: {"a":1}\n\n: a comment\n\ndata: [DONE]\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await agent.close();
    server.close();
  });
  const call = (path: string, signal = new AbortController().signal) => upstreamCall(agent, { origin, path, headers: {}, body: '{}', signal, name: 'up', stream: path !== '/huge', ends: done, maxAnswer: 1024 * 1024 });

  it('relays a stream, its headers less cookies', async () => {
    const reply = await call('/ok');
    expect(reply.kind).toBe('stream');
    if (reply.kind !== 'stream') return;
    expect(reply.headers['set-cookie']).toBeUndefined();
    const got: string[] = [];
    for await (const data of reply.events) got.push(data);
    expect(got).toEqual(['{"a":1}', '[DONE]']);
  });

  it('passes over a 503 with its words, and breaks a stream cut mid-way', async () => {
    await expect(call('/busy')).rejects.toMatchObject({ reason: 'status', status: 503, message: 'up: HTTP 503 {"error":"busy"}' });
    const reply = await call('/cut');
    if (reply.kind !== 'stream') throw new Error('not a stream');
    const it = reply.events[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ value: '{"a":1}', done: false });
    await expect(it.next()).rejects.toMatchObject({ reason: 'broken' });
  });

  it("keeps a refusal's first bytes and its Retry-After, without waiting for the rest of its body", async () => {
    await expect(call('/limited')).rejects.toMatchObject({ reason: 'status', status: 429, retryAfter: '7', message: expect.stringMatching(/^up: HTTP 429 \{"error":"slow down"\}/) });
  });

  it('passes over a whole answer larger than max_answer_mb, read no further', async () => {
    await expect(call('/huge')).rejects.toMatchObject({ reason: 'broken', message: 'up: an answer larger than 1 MiB' });
  });

  it('breaks a stream at an event larger than max_answer_mb, after the events before it', async () => {
    const reply = await call('/huge-event');
    if (reply.kind !== 'stream') throw new Error('not a stream');
    const it = reply.events[Symbol.asyncIterator]();
    expect(await it.next()).toEqual({ value: '{"a":1}', done: false });
    await expect(it.next()).rejects.toMatchObject({ reason: 'broken', message: 'up: stream broken (an event larger than 1048576 characters)' });
  });

  it('fails at once when the caller is gone before the answer', async () => {
    const gone = new AbortController();
    gone.abort(new Error('gone'));
    await expect(call('/ok', gone.signal)).rejects.toMatchObject({ reason: 'broken' });
  });
});
