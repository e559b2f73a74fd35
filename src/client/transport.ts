import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { requireDeferring } from '../internal/deferred-require.js';

/**
 * undici's Agent and request(), loaded from their own modules: the package entry point also loads
 * fetch, WebSocket, caches and more, which costs a CLI ~50 ms at every start. The undici version
 * is pinned in package.json because these paths are not its public entry point.
 */
const require = createRequire(import.meta.url);

export type AgentOptions = ConstructorParameters<typeof import('undici').Agent>[0];

export function createAgent(opts: AgentOptions): Dispatcher {
  // HTTP/2 (and node:http2, ~12 ms to load) only when a server offers it, which needs allowH2: never here.
  const Agent = requireDeferring<typeof import('undici').Agent>(import.meta.url, 'undici/lib/dispatcher/agent.js', { './client-h2.js': 'function' });
  return new Agent(opts);
}

type RequestFn = (this: Dispatcher, opts: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

export function send(dispatcher: Dispatcher, url: string, opts: Omit<Dispatcher.RequestOptions, 'origin' | 'path'>): Promise<Dispatcher.ResponseData> {
  const request = require('undici/lib/api/api-request.js') as RequestFn;
  const u = new URL(url);
  return request.call(dispatcher, { ...opts, origin: u.origin, path: `${u.pathname}${u.search}` } as Dispatcher.RequestOptions);
}
