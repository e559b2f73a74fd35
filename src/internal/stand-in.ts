export type StandInKind = 'function' | 'object';

/**
 * What a module that is not loaded yet is used through: loads it on first use, and then is the
 * module. For code that only calls the function or reads properties of the object later.
 */
export function standIn(load: () => unknown, kind: StandInKind): unknown {
  let real: unknown;
  const module = () => (real ??= load());
  if (kind === 'function') return (...args: unknown[]) => (module() as (...a: unknown[]) => unknown)(...args);
  return new Proxy({}, { get: (_, key) => (module() as Record<PropertyKey, unknown>)[key], has: (_, key) => key in (module() as object) });
}
