/** Follows one batch until it ends: polling with backoff, and through a service that does not answer for a while. */
import type { RouterClient } from '../client/index.js';
import { APIError, ConnectionError } from '../client/errors.js';
import { isTerminalBatchStatus } from '../client/facts.js';
import type { Batch } from '../client/types.js';
import { sleep } from '../internal/sleep.js';
import { BatchError } from './errors.js';
import { checkDriveOptions } from './options.js';
import { batchError } from './results.js';
import { checkOptions, optionNames } from '../client/option-names.js';

export interface WatchEvents {
  /** Each answer of a poll (the first is `first` when given). */
  polled?(batch: Batch): void;
  /** The status changed (`from` undefined: the first status seen). */
  status?(batch: Batch, from: Batch['status'] | undefined): void;
  /** A poll failed and the watch goes on: what failed, and when it polls again. */
  offline?(message: string, retryInMs: number): void;
}

// The names of WatchOptions' members, checked against it both ways (a new option is a name here too).
const WATCH_OPTIONS = optionNames<WatchOptions>()({ interval: 1, offlineTimeout: 1, first: 1, signal: 1, on: 1 });

export interface WatchOptions {
  /** First polling interval, seconds (default 1); it grows while nothing changes, up to 15 s. */
  interval?: number | undefined;
  /** Seconds to keep polling through network errors, 429 and 5xx (default 900); past it, a 'network' BatchError. */
  offlineTimeout?: number | undefined;
  /** The batch as last seen (a create's answer): the first poll is saved. */
  first?: Batch | undefined;
  signal?: AbortSignal | undefined;
  on?: WatchEvents | undefined;
}

export const MAX_INTERVAL_MS = 15_000;

/**
 * The wait after a failed poll: twice the last, but ending no later than the offline timeout does,
 * so that the last poll is made then and the timeout is kept (not overrun by up to a whole wait).
 */
export function offlineWait(interval: number, offlineSince: number, timeoutSeconds: number, now = Date.now()): number {
  return Math.max(50, Math.min(interval * 2, MAX_INTERVAL_MS, offlineSince + timeoutSeconds * 1000 - now));
}

/** 429, 5xx and connection failures pass; a watch keeps polling through them. */
export function isTransient(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  return err instanceof APIError && (err.status === 429 || err.status >= 500);
}

/** Polls batch `id` until it ends and returns it; the batch's own failure is its status, not an error. */
export async function watchBatch(client: RouterClient, id: string, o: WatchOptions = {}): Promise<Batch> {
  checkOptions('watchBatch()', o, WATCH_OPTIONS);
  checkDriveOptions(o);
  const { signal, on } = o;
  const base = (o.interval ?? 1) * 1000;
  const offlineTimeout = o.offlineTimeout ?? 900;
  let first = o.first;
  let interval = base;
  let last = first;
  let lastStatus = first?.status;
  let offlineSince: number | undefined;
  for (;;) {
    let b: Batch;
    try {
      b = first ?? (await client.batches.get(id, { signal }));
    } catch (err) {
      if (signal?.aborted || !isTransient(err)) throw batchError(err, id);
      offlineSince ??= Date.now();
      const offline = (Date.now() - offlineSince) / 1000;
      if (offline > offlineTimeout) throw new BatchError(`no answer from the service for ${Math.round(offline)}s (${(err as Error).message}); ${id} may still be running`, 'network');
      interval = offlineWait(interval, offlineSince, offlineTimeout);
      on?.offline?.(`${id}: ${(err as Error).message}; polling again in ${Math.round(interval / 1000)}s`, interval);
      await sleep(interval, signal);
      continue;
    }
    offlineSince = undefined;
    if (b.status !== lastStatus) {
      on?.status?.(b, lastStatus);
      lastStatus = b.status;
    }
    on?.polled?.(b);
    if (isTerminalBatchStatus(b.status)) return b;
    const progressed = last && (last.request_counts.completed !== b.request_counts.completed || last.request_counts.failed !== b.request_counts.failed);
    last = b;
    first = undefined;
    await sleep(interval, signal);
    interval = progressed ? base : Math.min(interval * 1.5, MAX_INTERVAL_MS);
  }
}
