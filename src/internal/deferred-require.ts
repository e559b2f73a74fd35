import Module, { createRequire } from 'node:module';
import { standIn, type StandInKind } from './stand-in.js';

/** How a deferred module is used: called (its exports are a function) or read (an object). */
export type Deferred = Record<string, StandInKind>;

type Load = (request: string, parent: { filename?: string } | undefined, isMain: boolean) => unknown;
const loader = Module as unknown as { _load: Load };

/**
 * `require(id)` from `from`, with some of the modules it loads at start (keyed by the request as
 * written, e.g. `node:child_process` or `./client-h2.js`) replaced by stand-ins that load them
 * on first use. Each stand-in costs nothing until used, and then is the module: for code that
 * only calls the function or reads properties of the object later, never at load time.
 */
export function requireDeferring<T>(from: string, id: string, deferred: Deferred): T {
  const require = createRequire(from);
  const original = loader._load;
  loader._load = function (this: unknown, request, parent, isMain) {
    const kind = deferred[request];
    if (kind && parent?.filename) {
      const fromParent = createRequire(parent.filename);
      const resolved = fromParent.resolve(request);
      return standIn(() => fromParent(resolved), kind);
    }
    return original.call(this, request, parent, isMain);
  };
  try {
    return require(id) as T;
  } finally {
    loader._load = original;
  }
}

/**
 * The CommonJS dependencies the CLI loads with require, and the loads each defers. The CLI bundle
 * (scripts/bundle.mjs) includes these modules and puts the same stand-ins in place.
 */
export const DEPENDENCIES = {
  // Executable subcommands, which router has none of (~7 ms).
  commander: { 'node:child_process': 'object' },
  // HTTP/2 and node:http2 (~12 ms), only used when a server offers it, which needs allowH2: never here.
  'undici/lib/dispatcher/agent.js': { './client-h2.js': 'function' },
  // Only with a proxy in the environment (HTTPS_PROXY, HTTP_PROXY).
  'undici/lib/dispatcher/env-http-proxy-agent.js': { './client-h2.js': 'function' },
  'undici/lib/dispatcher/pool.js': { './client-h2.js': 'function' },
  'undici/lib/dispatcher/dispatcher.js': {},
  'undici/lib/api/api-connect.js': {},
  'undici/lib/api/api-request.js': {},
} satisfies Record<string, Deferred>;

const loaded = new Map<string, unknown>();

/** A dependency of DEPENDENCIES, loaded once (send() asks for undici's request() on every call). */
export function requireDependency<T>(id: keyof typeof DEPENDENCIES): T {
  if (!loaded.has(id)) loaded.set(id, requireDeferring<T>(import.meta.url, id, DEPENDENCIES[id]));
  return loaded.get(id) as T;
}
