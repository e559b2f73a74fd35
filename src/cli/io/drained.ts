import type { Writable } from 'node:stream';

/** Waits until `out` has flushed, or fails with its error, or with `interrupt`: a reader that stopped reading never holds the command past it. */
export function drained(out: Writable, interrupt: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (out.writableLength === 0 || out.destroyed) return resolve();
    if (interrupt?.aborted) return reject(interrupt.reason);
    const done = (err?: Error) => {
      out.off('drain', onDrain);
      out.off('error', done);
      out.off('close', onDrain);
      interrupt?.removeEventListener('abort', onInterrupt);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onInterrupt = () => done(interrupt!.reason as Error);
    out.once('drain', onDrain);
    out.once('close', onDrain);
    out.once('error', done);
    interrupt?.addEventListener('abort', onInterrupt, { once: true });
  });
}
