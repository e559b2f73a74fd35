import { createServer, type Server } from 'node:http';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../../src/client/transport.js';

// The transport under the HTTP core: undici's dispatch() with a raw handler, over real HTTP.
let server: Server;
let origin: string;
const seen: string[] = [];
let release: () => void = () => {};
/** Resolves once the server has the /slow request (and `release` ends its answer). */
let slowArrived: Promise<void> = Promise.resolve();
let slowSeen: () => void = () => {};
const expectSlow = () => (slowArrived = new Promise((resolve) => (slowSeen = resolve)));

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url!);
    if (req.url === '/slow') {
      res.write('slow ');
      release = () => res.end('done');
      slowSeen();
    }
    else res.end(`answer to ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('send (dispatch with a raw handler)', () => {
  it('reads status, head and body', async () => {
    const pool = new Pool(origin, { connections: 1 });
    const res = await send(pool, `${origin}/hello?x=1`, { method: 'GET' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe('20');
    expect(await res.body.text()).toBe('answer to /hello?x=1');
    await pool.close();
  });

  it('a request aborted while it waits for its connection fails at once and is never sent', async () => {
    seen.length = 0;
    const pool = new Pool(origin, { connections: 1, pipelining: 1 });
    expectSlow();
    const slow = send(pool, `${origin}/slow`, { method: 'GET' });
    // The one connection is busy with /slow (not a fixed wait: on a loaded machine /slow came later, release() ended nothing).
    await slowArrived;
    const stop = new AbortController();
    const queued = send(pool, `${origin}/queued`, { method: 'GET', signal: stop.signal });
    stop.abort(new Error('stopped'));
    await expect(queued).rejects.toThrow('stopped');
    release();
    expect(await (await slow).body.text()).toBe('slow done');
    // The connection is free again: a request after it goes out, the aborted one never did.
    expect(await (await send(pool, `${origin}/after`, { method: 'GET' })).body.text()).toBe('answer to /after');
    expect(seen).toEqual(['/slow', '/after']);
    await pool.close();
  });

  it('a signal aborted mid-body fails the reader with its reason', async () => {
    const pool = new Pool(origin, { connections: 1 });
    const stop = new AbortController();
    const res = await send(pool, `${origin}/slow`, { method: 'GET', signal: stop.signal });
    const reading = res.body.text();
    stop.abort(new Error('stopped mid-body'));
    await expect(reading).rejects.toThrow('stopped mid-body');
    release();
    await pool.destroy();
  });
});
