/** The cassette file's format (`--record`, `--replay`), and what recording and replaying share. */
import type { StopSignal } from './types.js';

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
  };
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
 * rest of a stream nobody reads goes out unpaced).
 */
export function until(at: number, signal: StopSignal): Promise<void> | undefined {
  if (at <= performance.now() || signal.aborted) return undefined;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    // A timer counts from the loop's clock, which may lag: it can fire early, and is set again then.
    const tick = () => {
      const left = at - performance.now();
      if (left <= 0) done();
      else timer = setTimeout(tick, Math.ceil(left));
    };
    signal.addEventListener('abort', done, { once: true });
    tick();
  });
}

