import { Dispatcher, errors, Pool } from 'undici';

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
export class OriginPools extends Dispatcher {
  private readonly pools = new Map<string, Pool>();
  /** Why requests are failed from now on: the gateway is stopping (destroyed), or it was closed. */
  private refusal: Error | undefined;

  constructor(private readonly options: Pool.Options) {
    super();
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.refusal) return refuse(handler, this.refusal);
    const origin = String(opts.origin);
    let pool = this.pools.get(origin);
    if (!pool) this.pools.set(origin, (pool = new Pool(origin, this.options)));
    return pool.dispatch(opts, handler);
  }

  close(): Promise<void>;
  close(callback: () => void): void;
  close(callback?: () => void): Promise<void> | void {
    this.refusal ??= new errors.ClientClosedError();
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
    this.refusal ??= err ?? new errors.ClientDestroyedError();
    const destroyed = Promise.all([...this.pools.values()].map((p) => p.destroy(err))).then(() => {});
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
