import { Agent, EnvHttpProxyAgent, request, type Dispatcher } from 'undici';

// undici's public API only. The CLI bundle loads less of undici than its entry point does
// (scripts/bundle.mjs): that is the build's business, not this module's.

export type AgentOptions = ConstructorParameters<typeof Agent>[0];

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
    // '' rather than undefined: undici would read the process's environment for a missing one.
    return new EnvHttpProxyAgent({ ...opts, httpProxy: proxy.httpProxy ?? '', httpsProxy: proxy.httpsProxy ?? '', noProxy: proxy.noProxy ?? '' });
  }
  return new Agent(opts);
}

export function send(dispatcher: Dispatcher, url: string, opts: Omit<Dispatcher.RequestOptions, 'origin' | 'path'>): Promise<Dispatcher.ResponseData> {
  return request(url, { ...opts, dispatcher } as Parameters<typeof request>[1]) as Promise<Dispatcher.ResponseData>;
}
