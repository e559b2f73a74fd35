import type { Dispatcher } from 'undici';
import { requireDependency } from '../internal/deferred-require.js';

// undici's Agent and request(), loaded from their own modules: the package entry point also loads
// fetch, WebSocket, caches and more, which costs a CLI ~50 ms at every start. The undici version
// is pinned in package.json because these paths are not its public entry point.

export type AgentOptions = ConstructorParameters<typeof import('undici').Agent>[0];

export function createAgent(opts: AgentOptions): Dispatcher {
  const Agent = requireDependency<typeof import('undici').Agent>('undici/lib/dispatcher/agent.js');
  return new Agent(opts);
}

type RequestFn = (this: Dispatcher, opts: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

export function send(dispatcher: Dispatcher, url: string, opts: Omit<Dispatcher.RequestOptions, 'origin' | 'path'>): Promise<Dispatcher.ResponseData> {
  const request = requireDependency<RequestFn>('undici/lib/api/api-request.js');
  const u = new URL(url);
  return request.call(dispatcher, { ...opts, origin: u.origin, path: `${u.pathname}${u.search}` } as Dispatcher.RequestOptions);
}
