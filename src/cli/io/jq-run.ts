/**
 * jq (jq-wasm) run in a worker thread. The main thread stays free while a filter runs, so Ctrl-C or
 * a kill ends a filter that never does (`range(1e9)`) at once: the worker is terminated with it.
 * One worker serves the runs of a command; it keeps no process alive while it waits.
 */
import { Worker } from 'node:worker_threads';
import { jqGluePath } from './jq-glue-path.js';

// CommonJS, evaluated by the worker: the glue is loaded once, then each message is one run.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const ready = require(workerData.glue)();
parentPort.on('message', ({ input, filter, flags }) => {
  ready.then((jq) => jq.raw(input, filter, flags)).then(
    (out) => parentPort.postMessage({ out }),
    (err) => parentPort.postMessage({ error: String((err && err.message) || err) }),
  );
});`;

let worker: Worker | undefined;

/** jq's output for `input` (JSON text); a jq error rejects with jq's message, Ctrl-C with the signal's reason. */
export function runJqWorker(input: string, filter: string, flags: string[], signal?: AbortSignal): Promise<string> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const w = (worker ??= start());
  return new Promise((resolve, reject) => {
    const settle = (gone: boolean) => {
      signal?.removeEventListener('abort', onAbort);
      w.off('message', onMessage).off('error', onGone).off('exit', onGone);
      if (gone) worker = undefined;
      else w.unref();
    };
    const onMessage = (m: { out?: string; error?: string }) => {
      // After an error jq may be dead (a stack overflow aborts its runtime): the next run gets a new one.
      settle(m.error !== undefined);
      if (m.error !== undefined) {
        void w.terminate();
        reject(new Error(m.error));
      } else resolve(m.out ?? '');
    };
    const onGone = (err?: unknown) => {
      settle(true);
      reject(err instanceof Error ? err : new Error('jq stopped'));
    };
    const onAbort = () => {
      settle(true);
      void w.terminate();
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    w.on('message', onMessage).on('error', onGone).on('exit', onGone);
    w.ref();
    w.postMessage({ input, filter, flags });
  });
}

/**
 * The worker. Its own stdout and stderr are kept from ours (jq's "Aborted()" is not ours to print);
 * what it writes there unread holds the process open, so a worker that failed is terminated.
 */
function start(): Worker {
  return new Worker(WORKER, { eval: true, workerData: { glue: jqGluePath() }, stdout: true, stderr: true });
}
