import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { OnceMoreIfStale, SocketsMade, type SendsAgain } from '../../src/emulator/providers/stale-socket.js';

type Controller = Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestStart']>>[0];

/** A request's handler that writes down what it was told. */
const handler = (name: string, said: string[]): Dispatcher.DispatchHandler => ({
  onRequestStart: () => said.push(`${name} start`),
  onResponseStart: (_c, status) => said.push(`${name} ${status}`),
  onResponseData: (_c, chunk) => said.push(`${name} ${chunk.toString()}`),
  onResponseEnd: () => said.push(`${name} end`),
  onResponseError: (_c, err) => said.push(`${name} ${err.message}`),
});

describe("the stale-socket wrapper of a pool's requests", () => {
  it('is kept once its request ended and carries the next, a late call for the one before dropped', () => {
    const spare: OnceMoreIfStale[] = [];
    const resent: string[] = [];
    const owner: SendsAgain = { spare, staleLoss: () => false, sendFresh: (origin) => void resent.push(origin) };
    const sockets = new SocketsMade();
    const opts = { origin: 'http://127.0.0.1:1', path: '/', method: 'POST' } as Dispatcher.DispatchOptions;
    const said: string[] = [];
    const first = {} as Controller;
    const a = OnceMoreIfStale.of(spare, handler('a', said), owner, sockets, opts.origin as string, opts);
    a.onRequestStart(first, {});
    a.onResponseStart(first, 200, {});
    a.onResponseData(first, Buffer.from('x'));
    a.onResponseEnd(first, {});
    expect(spare).toEqual([a]);

    const second = {} as Controller;
    const b = OnceMoreIfStale.of(spare, handler('b', said), owner, sockets, opts.origin as string, opts);
    expect(b).toBe(a);
    expect(spare).toEqual([]);
    b.onRequestStart(second, {});
    b.onResponseData(first, Buffer.from('late'));
    b.onResponseError(second, new Error('cut'));
    expect(said).toEqual(['a start', 'a 200', 'a x', 'a end', 'b start', 'b cut']);
    expect(spare).toEqual([a]);
    expect(resent).toEqual([]);
  });

  it('drops a late call for the request before while the next it carries has not started', () => {
    const spare: OnceMoreIfStale[] = [];
    const owner: SendsAgain = { spare, staleLoss: () => false, sendFresh: () => {} };
    const sockets = new SocketsMade();
    const said: string[] = [];
    const first = {} as Controller;
    const a = OnceMoreIfStale.of(spare, handler('a', said), owner, sockets, 'http://127.0.0.1:1', {} as Dispatcher.DispatchOptions);
    a.onRequestStart(first, {});
    a.onResponseEnd(first, {});
    // The next request waits in the pool's queue: no controller yet. undici calls a request's onError
    // after its end when its body stream fails then (Request's abort): that call names the first's.
    const b = OnceMoreIfStale.of(spare, handler('b', said), owner, sockets, 'http://127.0.0.1:1', {} as Dispatcher.DispatchOptions);
    b.onResponseError(first, new Error('late'));
    b.onResponseData(first, Buffer.from('late'));
    expect(spare).toEqual([]);
    const second = {} as Controller;
    b.onRequestStart(second, {});
    b.onResponseEnd(second, {});
    expect(said).toEqual(['a start', 'a end', 'b start', 'b end']);
  });

  it('gives an error before its request started (no controller: a connection refused) to the request it carries', () => {
    const spare: OnceMoreIfStale[] = [];
    const owner: SendsAgain = { spare, staleLoss: () => false, sendFresh: () => {} };
    const said: string[] = [];
    const w = OnceMoreIfStale.of(spare, handler('a', said), owner, new SocketsMade(), 'http://127.0.0.1:1', {} as Dispatcher.DispatchOptions);
    w.onResponseError(undefined as unknown as Controller, new Error('refused'));
    expect(said).toEqual(['a refused']);
    expect(spare).toEqual([w]);
  });

  it('sends a request lost on a stale socket once more, with the handler it carried, and is kept for another', () => {
    const spare: OnceMoreIfStale[] = [];
    const resent: Dispatcher.DispatchHandler[] = [];
    const owner: SendsAgain = { spare, staleLoss: () => true, sendFresh: (_origin, _opts, h) => void resent.push(h) };
    const said: string[] = [];
    const h = handler('a', said);
    const w = OnceMoreIfStale.of(spare, h, owner, new SocketsMade(), 'http://127.0.0.1:1', {} as Dispatcher.DispatchOptions);
    const c = {} as Controller;
    w.onRequestStart(c, {});
    w.onResponseError(c, new Error('other side closed'));
    expect(resent).toEqual([h]);
    expect(said).toEqual(['a start']);
    expect(spare).toEqual([w]);
  });
});
