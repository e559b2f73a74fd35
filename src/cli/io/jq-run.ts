/**
 * jq (jq-wasm) run in a worker thread. The main thread stays free while a filter runs, so Ctrl-C or
 * a kill ends a filter that never does (`range(1e9)`) at once: the worker is terminated with it.
 * One worker serves the runs of a command; it keeps no process alive while it waits.
 */
import { Worker } from 'node:worker_threads';
import { jqGluePath } from './jq-glue-path.js';

// CommonJS, evaluated by the worker: the glue is loaded once, then each message is one run of jq over
// the input's values (scripts/jq-glue.mjs adds run(): stdout, stderr and the exit status, all kept).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const ready = require(workerData.glue)();
parentPort.on('message', ({ input, filter, flags }) => {
  ready.then((jq) => jq.run(input, filter, flags)).then(
    (ran) => parentPort.postMessage(ran),
    (err) => parentPort.postMessage({ error: String((err && err.message) || err) }),
  );
});`;

/** One run of jq: what it wrote to stdout and stderr, and its exit status (0: no error). */
export interface JqRun {
  out: string;
  err: string;
  status: number;
}

let worker: Worker | undefined;

/** jq's output for `input` (JSON text); a jq error rejects with jq's message, Ctrl-C with the signal's reason. */
export async function runJqWorker(input: string, filter: string, flags: string[], signal?: AbortSignal): Promise<string> {
  const ran = await runJqStream(input, filter, flags, signal);
  // As jq-wasm's raw(): the output when there is any, else the error jq gave.
  if (ran.out) return ran.out;
  if (ran.err) {
    forget();
    throw new Error(ran.err.trim());
  }
  return '';
}

/**
 * One run of jq over `input`, a stream of JSON texts (each value the filter runs on in turn, as `jq`
 * reads its stdin): all it said. A runtime that aborted rejects; Ctrl-C rejects with the signal's reason.
 */
export function runJqStream(input: string, filter: string, flags: string[], signal?: AbortSignal): Promise<JqRun> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const w = (worker ??= start());
  return new Promise((resolve, reject) => {
    const settle = (gone: boolean) => {
      signal?.removeEventListener('abort', onAbort);
      w.off('message', onMessage).off('error', onGone).off('exit', onGone);
      if (gone) worker = undefined;
      else w.unref();
    };
    const onMessage = (m: Partial<JqRun> & { error?: string }) => {
      // After an error jq may be dead (a stack overflow aborts its runtime): the next run gets a new one.
      const failed = m.error !== undefined || (m.status ?? 0) !== 0;
      settle(failed);
      if (failed) void w.terminate();
      if (m.error !== undefined) reject(new Error(m.error));
      else resolve({ out: m.out ?? '', err: m.err ?? '', status: m.status ?? 0 });
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

/** The next run starts a new jq (this one said an error: its runtime may be dead). */
function forget(): void {
  const w = worker;
  worker = undefined;
  void w?.terminate();
}

/**
 * The worker. Its own stdout and stderr are kept from ours (jq's "Aborted()" is not ours to print);
 * what it writes there unread holds the process open, so a worker that failed is terminated.
 */
function start(): Worker {
  return new Worker(WORKER, { eval: true, workerData: { glue: jqGluePath() }, stdout: true, stderr: true });
}
