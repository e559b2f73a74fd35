import Module, { createRequire } from 'node:module';

/** How a deferred module is used: called (its exports are a function) or read (an object). */
export type Deferred = Record<string, 'function' | 'object'>;

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
      return standIn(fromParent.resolve(request), kind, fromParent);
    }
    return original.call(this, request, parent, isMain);
  };
  try {
    return require(id) as T;
  } finally {
    loader._load = original;
  }
}

function standIn(resolved: string, kind: 'function' | 'object', require: NodeJS.Require): unknown {
  let real: unknown;
  const load = () => (real ??= require(resolved));
  if (kind === 'function') return (...args: unknown[]) => (load() as (...a: unknown[]) => unknown)(...args);
  return new Proxy({}, { get: (_, key) => (load() as Record<PropertyKey, unknown>)[key], has: (_, key) => key in (load() as object) });
}
