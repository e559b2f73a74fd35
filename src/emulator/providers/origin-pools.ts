import { Dispatcher, Pool } from 'undici';

/**
 * A provider's connections: one undici Pool for each origin it is sent to (its base_url's, its speech
 * URL's), kept for the gateway's life. undici 7's Agent closes an origin's pool when its connections
 * are all gone and opens a new one; a stream cut on the way (by the provider, or the gateway letting it
 * go for a caller gone) made the dying pool open one more connection for nothing, every time (fixed in
 * undici 8, which needs node 22). A provider's origins are few and named in its configuration.
 */
export class OriginPools extends Dispatcher {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: Pool.Options) {
    super();
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(opts.origin);
    let pool = this.pools.get(origin);
    if (!pool) this.pools.set(origin, (pool = new Pool(origin, this.options)));
    return pool.dispatch(opts, handler);
  }

  close(): Promise<void>;
  close(callback: () => void): void;
  close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all([...this.pools.values()].map((p) => p.close())).then(() => {});
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
    const destroyed = Promise.all([...this.pools.values()].map((p) => p.destroy(err))).then(() => {});
    if (!callback) return destroyed;
    void destroyed.then(callback);
  }
}
