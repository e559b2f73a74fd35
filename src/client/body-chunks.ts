import type { Readable } from 'node:stream';

/**
 * Chunks that may wait in the queue before the body is paused (the socket then holds the rest): up
 * to 4 MiB of 64 KiB reads. At 16 a fast stream paused and resumed the socket every few reads, and
 * a paused body hands chunks out through its own buffer: ~7% more CPU per streamed answer.
 */
const HIGH_WATER = 64;

/**
 * A body's chunks one by one as the network gave them. A Readable's own async iterator calls read(),
 * which joins every buffered chunk into a new Buffer: a copy of the whole stream when the reader is
 * busy. Here the body flows, and is paused while HIGH_WATER chunks wait.
 */
export function flowingChunks(body: Readable): AsyncIterator<Buffer> & { rest(): Buffer[] } {
  const queue: Buffer[] = [];
  let head = 0;
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const wakeUp = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  body.on('data', (chunk: Buffer) => {
    queue.push(chunk);
    if (queue.length - head >= HIGH_WATER) body.pause();
    wakeUp();
  });
  body.on('end', () => {
    ended = true;
    wakeUp();
  });
  body.on('error', (err) => {
    failure = err;
    wakeUp();
  });
  body.on('close', () => {
    if (!ended) failure ??= Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
    wakeUp();
  });
  return {
    async next() {
      while (head === queue.length) {
        queue.length = 0;
        head = 0;
        if (failure) throw failure;
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wake = resolve));
      }
      const chunk = queue[head++]!;
      if (body.isPaused() && queue.length - head < HIGH_WATER / 2) body.resume();
      return { value: chunk, done: false };
    },
    /** The chunks that are already queued, taken at once (none when the next one is still to come). */
    rest() {
      const taken = queue.splice(head);
      queue.length = 0;
      head = 0;
      if (body.isPaused()) body.resume();
      return taken;
    },
    async return() {
      body.destroy();
      return { value: undefined, done: true };
    },
  };
}
