// undici's dispatchers, from the modules that define them. undici's entry point would also make an Agent
// of its own the process's global dispatcher (a symbol on globalThis that node's own fetch() then goes
// through, and that can't be taken back): a library in someone else's process must not. The CLI bundle
// swaps this module for the same modules with the proxy agent deferred (scripts/bundle-plugins.mjs).
import type * as undici from 'undici';
import DispatcherImpl from 'undici/lib/dispatcher/dispatcher.js';
import connect from 'undici/lib/api/api-connect.js';
import AgentImpl from 'undici/lib/dispatcher/agent.js';
import PoolImpl from 'undici/lib/dispatcher/pool.js';
import ProxyImpl from 'undici/lib/dispatcher/env-http-proxy-agent.js';

// A proxy tunnel is a CONNECT request, made with the connect() the entry point puts on every dispatcher.
(DispatcherImpl as { prototype: { connect?: unknown } }).prototype.connect ??= connect;

export const Agent = AgentImpl as typeof undici.Agent;
export const Pool = PoolImpl as typeof undici.Pool;
export const EnvHttpProxyAgent = ProxyImpl as typeof undici.EnvHttpProxyAgent;
