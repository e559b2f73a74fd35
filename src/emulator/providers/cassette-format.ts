/** The cassette file's format (`--record`, `--replay`), and what recording and replaying share. */
import type { FailureReason, StopSignal } from './types.js';

/** `--record`, `--replay`, `--replay --record-missing`. */
export type CassetteMode = 'record' | 'replay' | 'replay-record';

type Body = Record<string, unknown>;

/** One upstream exchange as a file a person reads and edits (JSON, indented). */
export interface Cassette {
  provider: string;
  /** `embeddings`, `responses` or `speech` for those exchanges; chat when absent. */
  endpoint?: 'embeddings' | 'responses' | 'speech';
  recorded_at: string;
  request: { method: 'POST'; url: string; headers: Record<string, string>; body: Body };
  response: {
    status: number;
    headers: Record<string, string>;
    /** A whole answer: its JSON (or its text when it is not JSON). */
    body?: unknown;
    /** A whole answer: the milliseconds it took (replayed as a wait, scaled by --replay-timing). */
    after_ms?: number;
    /** A stream: each event's data, parsed when it is JSON, with the milliseconds since the request. */
    chunks?: { after_ms: number; data: unknown }[];
    /** Speech: the audio as it came, each piece in base64 with the milliseconds since the request. */
    audio?: { after_ms: number; base64: string }[];
    /** Where the upstream broke the stream (or the audio), after the chunks above. */
    broken?: string;
    /** When it broke, in milliseconds since the request (a stall's timeout comes that late again); absent in older cassettes. */
    broken_after_ms?: number;
    /** Why it broke, when not a plain break (`timeout`: a stall past idle_timeout_ms): replayed as the same failure, so its cause is the same. */
    broken_reason?: FailureReason;
    /**
     * A failure the gateway passed over (refused, timed out, a 429 or 5xx, an answer that was none):
     * replayed as the same failure after `after_ms`, so the next provider (or the caller's 502) follows
     * as it did, with the cause its words named (`error_type`, upstream-cause.ts). `status` is the upstream's (0 when it gave no HTTP answer).
     */
    failure?: { reason: FailureReason; message: string; retry_after?: string; error_type?: string };
  };
  /**
   * Which answer of identical requests this is (1 when absent): replayed in this order, the last
   * again for any request after it (a retry after an error replays the error, then the answer).
   */
  take?: number;
  /**
   * The `--record` run that kept it (when that run started). A request's takes of more than one run
   * (a run killed after writing its new takes, before removing the older ones) replay the newest
   * run's only; takes without one (older versions', written by hand) count as the oldest run.
   */
  run?: string;
  /**
   * A failure `--record-missing` kept (a refusal, a 503): a gap in the recording, not an answer. A
   * later `--record-missing` asks the upstream again instead of replaying it, and writes what comes in
   * its place; `--replay` replays it.
   */
  record_missing?: true;
}

/** The gateway's stop, as replays hear it: a paced replay ends at once with the stop's failure. */
export class Stopping implements StopSignal {
  aborted = false;
  readonly reason = undefined;
  private listeners = new Set<() => void>();

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners.delete(listener);
  }

  stop(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const listener of this.listeners) listener();
    this.listeners.clear();
  }
}

export const text = (data: unknown) => (typeof data === 'string' ? data : JSON.stringify(data));
export const parsed = (t: string): unknown => {
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
};

/**
 * Resolves once `at` (a performance.now() time) has come, or at once when the caller has gone (the
 * rest of a stream nobody reads goes out unpaced) or the gateway stops (`stop`).
 */
export function until(at: number, signal: StopSignal, stop?: StopSignal): Promise<void> | undefined {
  if (at <= performance.now() || signal.aborted || stop?.aborted) return undefined;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    // A timer counts from the loop's clock, which may lag: it can fire early, and is set again then.
    const tick = () => {
      const left = at - performance.now();
      if (left <= 0) done();
      else timer = setTimeout(tick, Math.ceil(left));
    };
    signal.addEventListener('abort', done, { once: true });
    stop?.addEventListener('abort', done);
    tick();
  });
}

