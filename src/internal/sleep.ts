import { whenAborted } from './abort-fanout.js';

/**
 * The one abortable sleep of the code base: resolves after `ms`, rejects with the signal's
 * reason on abort, and removes its listener either way (a long watch adds none that linger).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      forget();
      resolve();
    }, ms);
    const forget = signal
      ? whenAborted(signal, () => {
          clearTimeout(timer);
          reject(signal.reason);
        })
      : () => {};
  });
}
