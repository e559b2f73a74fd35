/**
 * The reasons callers aborted their requests with. A request aborted after its head came fails
 * reading its body with that reason, and it goes out as it is, as before the head: the caller's own
 * `new Error('stop')` or AbortSignal.timeout()'s TimeoutError, never a ConnectionError around it.
 * A reason that is no object (`abort('stop')`) cannot be noted; undici and sockets never fail with
 * one, so any such failure is a caller's reason.
 */
const reasons = new WeakSet<object>();

function isObject(value: unknown): value is object {
  return value !== null && (typeof value === 'object' || typeof value === 'function');
}

export function noteCallerAbort(reason: unknown): void {
  if (isObject(reason)) reasons.add(reason);
}

export function isCallerAbort(err: unknown): boolean {
  return isObject(err) ? reasons.has(err) : err !== undefined;
}
