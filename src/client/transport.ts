import type { Dispatcher } from 'undici';
import { requireDependency } from '../internal/deferred-require.js';

// undici's Agent and request(), loaded from their own modules: the package entry point also loads
// fetch, WebSocket, caches and more, which costs a CLI ~50 ms at every start. The undici version
// is pinned in package.json because these paths are not its public entry point.

export type AgentOptions = ConstructorParameters<typeof import('undici').Agent>[0];

export interface ProxyOptions {
  /** For http:// API roots. */
  httpProxy?: string;
  /** For https:// API roots. */
  httpsProxy?: string;
  /** Hosts (and host:port) reached directly, comma-separated, as NO_PROXY. */
  noProxy?: string;
}

/** undici's Agent; one that goes through a proxy for the origins `proxy` says, when it names one. */
export function createAgent(opts: AgentOptions, proxy?: ProxyOptions): Dispatcher {
  if (proxy?.httpProxy || proxy?.httpsProxy) {
    const EnvHttpProxyAgent = requireDependency<typeof import('undici').EnvHttpProxyAgent>('undici/lib/dispatcher/env-http-proxy-agent.js');
    // A proxy tunnel is a CONNECT request, made with the connect() that undici's entry point (not
    // loaded) puts on every dispatcher.
    const Dispatcher = requireDependency<{ prototype: Record<string, unknown> }>('undici/lib/dispatcher/dispatcher.js');
    Dispatcher.prototype.connect ??= requireDependency('undici/lib/api/api-connect.js');
    // '' rather than undefined: undici would read the process's environment for a missing one.
    return new EnvHttpProxyAgent({ ...opts, httpProxy: proxy.httpProxy ?? '', httpsProxy: proxy.httpsProxy ?? '', noProxy: proxy.noProxy ?? '' });
  }
  const Agent = requireDependency<typeof import('undici').Agent>('undici/lib/dispatcher/agent.js');
  return new Agent(opts);
}

type RequestFn = (this: Dispatcher, opts: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

export function send(dispatcher: Dispatcher, url: string, opts: Omit<Dispatcher.RequestOptions, 'origin' | 'path'>): Promise<Dispatcher.ResponseData> {
  const request = requireDependency<RequestFn>('undici/lib/api/api-request.js');
  const u = new URL(url);
  return request.call(dispatcher, { ...opts, origin: u.origin, path: `${u.pathname}${u.search}` } as Dispatcher.RequestOptions);
}
