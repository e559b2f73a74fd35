// undici's dispatchers, from the modules that define them. undici's entry point would also make an Agent
// of its own the process's global dispatcher (a symbol on globalThis that node's own fetch() then goes
// through, and that can't be taken back): a library in someone else's process must not. An undici that
// keeps them elsewhere is loaded whole, as before. The CLI bundle swaps this module for the same modules
// with the proxy agent deferred (scripts/bundle-plugins.mjs, leanUndici()).
import { createRequire } from 'node:module';
import type * as undici from 'undici';

type Parts = Pick<typeof undici, 'Agent' | 'Pool' | 'EnvHttpProxyAgent'>;

function load(): Parts {
  const require = createRequire(import.meta.url);
  try {
    const dispatcher = require('undici/lib/dispatcher/dispatcher.js') as { prototype: { connect?: unknown } };
    // A proxy tunnel is a CONNECT request, made with the connect() the entry point puts on every dispatcher.
    dispatcher.prototype.connect ??= require('undici/lib/api/api-connect.js');
    return {
      Agent: require('undici/lib/dispatcher/agent.js') as Parts['Agent'],
      Pool: require('undici/lib/dispatcher/pool.js') as Parts['Pool'],
      EnvHttpProxyAgent: require('undici/lib/dispatcher/env-http-proxy-agent.js') as Parts['EnvHttpProxyAgent'],
    };
  } catch {
    return require('undici') as Parts;
  }
}

export const { Agent, Pool, EnvHttpProxyAgent } = load();
