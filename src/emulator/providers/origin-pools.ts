import { Client, Dispatcher, errors, Pool } from 'undici';
import { OnceMoreIfStale, SocketsMade, type SendsAgain } from './stale-socket.js';

/**
 * A provider's connections: one undici Pool for each origin it is sent to (its base_url's, its speech
 * URL's), kept for the gateway's life. undici 7's Agent closes an origin's pool when its connections
 * are all gone and opens a new one; a stream cut on the way (by the provider, or the gateway letting it
 * go for a caller gone) made the dying pool open one more connection for nothing, every time (fixed in
 * undici 8, which needs node 22). A provider's origins are few and named in its configuration. Once
 * closed or destroyed it sends nothing more, to any origin (as the Agent): a request to an origin first
 * asked then is failed, not given a new pool (the gateway's stop destroys it; a request still reading its
 * body was sent upstream after it).
 */
/** The shortest idle time a connection is kept, however soon its server was seen to close one (OriginPools.open). */
const SHORTEST_KEEP_ALIVE_MS = 100;

export class OriginPools extends Dispatcher implements SendsAgain {
  private readonly pools = new Map<string, Pool>();
  /** Each pool's sockets, to tell a reused connection's loss from a new one's. */
  private readonly sockets = new Map<Pool, SocketsMade>();
  /** Pools replaced by a shorter-lived one (open()), and connections made for a request sent again (sendFresh()), closing once their requests end: destroyed with the others at a stop. */
  private readonly retiring = new Set<Pool | Client>();
  readonly spare: OnceMoreIfStale[] = [];
  /** Why requests are failed from now on: the gateway is stopping (destroyed), or it was closed. */
  private refusal: Error | undefined;

  constructor(private readonly options: Pool.Options) {
    super();
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.refusal) return refuse(handler, this.refusal);
    const origin = String(opts.origin);
    const pool = this.pools.get(origin) ?? this.open(origin, this.options.keepAliveTimeout ?? 4_000);
    // A handler of undici's older interface (request(), speech's) goes as it is: never sent again.
    if (typeof handler.onRequestStart !== 'function') return pool.dispatch(opts, handler);
    return pool.dispatch(opts, OnceMoreIfStale.of(this.spare, handler, this, this.sockets.get(pool)!, origin, opts));
  }

  staleLoss(sockets: SocketsMade, err: Error): boolean {
    return !this.refusal && sockets.reusedAndLost(err);
  }

  /**
   * A request whose reused connection was lost before any answer (the server closed it as the request
   * went out: it never read it), sent once more on a connection made for it alone, closed once it ends.
   */
  sendFresh(origin: string, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    if (this.refusal) return void refuse(handler, this.refusal);
    const client = new Client(origin, this.options);
    this.retiring.add(client);
    client.dispatch(opts, handler);
    void client.close().catch(() => undefined).finally(() => this.retiring.delete(client));
  }

  /**
   * An origin's pool, whose idle connections are let go after `keepAliveTimeout` (when the server gives no
   * Keep-Alive hint). A connection the server closes first ("other side closed": idle, or under a request)
   * says it closes sooner than that: the origin gets a new pool keeping them half as long, down to
   * SHORTEST_KEEP_ALIVE_MS, and the old one is closed once its requests end. So a server that closes idle
   * connections at 300 ms without a hint is met by a reused connection it closes at most twice (1 s, 500 ms).
   */
  private open(origin: string, keepAliveTimeout: number): Pool {
    const sockets = new SocketsMade();
    const pool = new Pool(origin, { ...this.options, keepAliveTimeout, connect: sockets.connector(this.options.connectTimeout) });
    this.sockets.set(pool, sockets);
    pool.on('disconnect', (_origin, _targets, err) => {
      const shorter = Math.max(SHORTEST_KEEP_ALIVE_MS, Math.floor(keepAliveTimeout / 2));
      if ((err as { code?: string } | null)?.code !== 'UND_ERR_SOCKET' || this.refusal || this.pools.get(origin) !== pool || shorter >= keepAliveTimeout) return;
      this.open(origin, shorter);
      this.retiring.add(pool);
      void pool.close().catch(() => undefined).finally(() => (this.retiring.delete(pool), this.sockets.delete(pool)));
    });
    this.pools.set(origin, pool);
    return pool;
  }

  close(): Promise<void>;
  close(callback: () => void): void;
  close(callback?: () => void): Promise<void> | void {
    this.refusal ??= new errors.ClientClosedError();
    const closed = Promise.all([...this.pools.values(), ...this.retiring].map((p) => p.close())).then(() => {});
    if (!callback) return closed;
    void closed.then(callback);
  }

  destroy(): Promise<void>;
  destroy(err: Error | null): Promise<void>;
  destroy(callback: () => void): void;
  destroy(err: Error | null, callback: () => void): void;
  destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const err = typeof a === 'function' ? null : (a ?? null);
    const callback = typeof a === 'function' ? a : b;
    this.refusal ??= err ?? new errors.ClientDestroyedError();
    const destroyed = Promise.all([...this.pools.values(), ...this.retiring].map((p) => p.destroy(err))).then(() => {});
    if (!callback) return destroyed;
    void destroyed.then(callback);
  }
}

/** Fails a request before it starts, in the way its handler hears errors (as undici's own dispatchers do). */
function refuse(handler: Dispatcher.DispatchHandler, err: Error): false {
  const h = handler as { onRequestStart?: unknown; onResponseError?: (controller: null, err: Error) => void; onError?: (err: Error) => void };
  if (typeof h.onRequestStart === 'function') h.onResponseError?.(null, err);
  else h.onError?.(err);
  return false;
}
