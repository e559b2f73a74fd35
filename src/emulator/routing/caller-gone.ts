import type { Ctx } from '../http/http.js';
import type { StopSignal } from '../providers/types.js';

/**
 * A caller's going as adapters hear it. An AbortController's signal cost about 2% of the gateway's
 * time per request (its creation and its listeners, measured under load), on every request, for the
 * few callers that hang up.
 */
class CallerGone implements StopSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] = [];

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at >= 0) this.listeners.splice(at, 1);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}

/**
 * Aborts when the caller hangs up before its answer was whole: an upstream nobody reads is let go. An
 * answer that was sent in full aborts nothing (an abort on every request made and threw an error each).
 */
export function callerGone(ctx: Ctx): StopSignal {
  const gone = new CallerGone();
  // A connection that closed before now (while the request waited) will say so no more: gone already.
  if (ctx.res.destroyed) {
    if (!ctx.res.writableFinished) gone.abort();
  } else ctx.res.once('close', () => ctx.res.writableFinished || gone.abort());
  return gone;
}
