import type { Ctx } from './http.js';
import { HttpError } from './http.js';

/** 402 when the caller's workspace has no credit left. */
export function chargeable(ctx: Ctx): void {
  if (ctx.store.balance(ctx.workspace) <= 0) {
    throw new HttpError(402, 'Insufficient credits. Add more credits to continue.', 'payment_required');
  }
}

/**
 * Writes events as an SSE stream with backpressure, applying stream faults:
 * `cut` drops the connection after N events, `error-chunk` sends `errorEvent` after N events and ends.
 * Returns true when the whole stream was delivered.
 */
export async function writeSSE(ctx: Ctx, events: unknown[], errorEvent: unknown, terminator?: string, eventName?: (e: unknown) => string | undefined): Promise<boolean> {
  const res = ctx.res;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(': ROUTER PROCESSING\n\n');
  const fault = ctx.fault;
  const cutAt = fault?.kind === 'cut' ? (fault.after ?? Math.floor(events.length / 2)) : -1;
  const errorAt = fault?.kind === 'error-chunk' ? (fault.after ?? Math.floor(events.length / 2)) : -1;
  const frame = (e: unknown) => {
    const name = eventName?.(e);
    return `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(e)}\n\n`;
  };
  let closed = false;
  res.on('close', () => (closed = true));
  for (let i = 0; i < events.length; i++) {
    if (closed) return false;
    if (i === cutAt) {
      await new Promise((r) => setTimeout(r, 20));
      res.destroy();
      return false;
    }
    if (i === errorAt) {
      res.write(frame(errorEvent));
      if (terminator) res.write(`data: ${terminator}\n\n`);
      res.end();
      return false;
    }
    if (!res.write(frame(events[i]))) await drainOrClose(res);
  }
  if (terminator) res.write(`data: ${terminator}\n\n`);
  res.end();
  return !closed;
}

export function drainOrClose(res: NodeJS.WritableStream & { once: Function; off: Function }): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
