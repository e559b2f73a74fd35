/**
 * Abort listeners on a caller's AbortSignal, one per signal however many calls share it. A program
 * that gives one signal to many concurrent requests or tools would otherwise see node print a
 * MaxListenersExceededWarning on its stderr at the eleventh. AbortSignal.any() is no way out: on
 * node 20 every signal it makes stays reachable from a long-lived source (measured: 300,000 of them
 * held 348 MB after a full GC).
 */
interface Fan {
  calls: Set<() => void>;
  listener: () => void;
}

const fans = new WeakMap<AbortSignal, Fan>();

/**
 * Runs every call, as separate listeners would be: one that throws does not keep the others from
 * running. Its error is not swallowed: the first is thrown once all have run (node reports it as a
 * listener's own, on the next tick), any others each from a microtask of its own.
 */
function runAll(calls: readonly (() => void)[]): void {
  const errors: unknown[] = [];
  for (const call of calls) {
    try {
      call();
    } catch (err) {
      errors.push(err);
    }
  }
  for (const err of errors.slice(1)) {
    queueMicrotask(() => {
      throw err;
    });
  }
  if (errors.length) throw errors[0];
}

/** Calls `onAbort` when `signal` aborts, until the returned function is called (which may be called more than once). */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let fan = fans.get(signal);
  if (!fan) {
    const calls = new Set<() => void>();
    const listener = () => {
      fans.delete(signal);
      runAll([...calls]);
    };
    fan = { calls, listener };
    fans.set(signal, fan);
    signal.addEventListener('abort', listener, { once: true });
  }
  const { calls, listener } = fan;
  const entry = () => onAbort();
  calls.add(entry);
  return () => {
    if (!calls.delete(entry) || calls.size) return;
    signal.removeEventListener('abort', listener);
    if (fans.get(signal)?.calls === calls) fans.delete(signal);
  };
}

/**
 * A signal of one call's own, aborted with `parent` (and with a TimeoutError after `timeoutMs`, when
 * given); `done()` lets go of the parent and the timer once the call has ended.
 */
export function childSignal(parent: AbortSignal, timeoutMs?: number): { signal: AbortSignal; timedOut: () => boolean; done: () => void } {
  const own = new AbortController();
  let timedOut = false;
  const forget = parent.aborted ? () => {} : whenAborted(parent, () => own.abort(parent.reason));
  if (parent.aborted) own.abort(parent.reason);
  const timer =
    timeoutMs === undefined || own.signal.aborted
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          own.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
        }, timeoutMs);
  // Not unref'd: a function tool awaiting nothing that holds the event loop open would otherwise end the
  // program (exit 13, an unsettled await) instead of being bounded; done() clears it when the call ends.
  return {
    signal: own.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      forget();
    },
  };
}

/**
 * `work`'s outcome, or `signal`'s reason as soon as it aborts: for work that may never look at its
 * signal. Work left behind settles unwatched (its failure is nobody's).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  const leave = () => void work.catch(() => {});
  if (signal.aborted) {
    leave();
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const forget = whenAborted(signal, () => {
      leave();
      reject(signal.reason);
    });
    work.then(
      (value) => {
        forget();
        resolve(value);
      },
      (err: unknown) => {
        forget();
        reject(err);
      },
    );
  });
}

/**
 * `work` given a signal aborted with `parent` or `ms` after this call, whichever comes first: a bound
 * on the whole of it, retries and all, measured from its start. Not AbortSignal.any([parent,
 * AbortSignal.timeout(ms)]): on node 20 that composite holds its timeout signal weakly, a full GC
 * collects it, and the bound never comes (the cost lookup of `router speak` then waited 120 s an
 * attempt). This timer is held by the timer list until `work` ends.
 */
export async function withinMs<T>(parent: AbortSignal, ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const bounded = childSignal(parent, ms);
  try {
    return await work(bounded.signal);
  } finally {
    bounded.done();
  }
}
