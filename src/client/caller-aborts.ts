/**
 * The reasons callers aborted their requests with. A request aborted after its head came fails
 * reading its body with that reason, and it goes out as it is, as before the head: the caller's own
 * `new Error('stop')` or AbortSignal.timeout()'s TimeoutError, never a ConnectionError around it.
 */
const reasons = new WeakSet<object>();

export function noteCallerAbort(reason: unknown): void {
  if (reason !== null && (typeof reason === 'object' || typeof reason === 'function')) reasons.add(reason);
}

export function isCallerAbort(err: unknown): boolean {
  return err !== null && (typeof err === 'object' || typeof err === 'function') && reasons.has(err);
}
