/**
 * Chunks that may wait in the queue before the socket is paused: up to 4 MiB of 64 KiB reads. At 16
 * a fast stream paused and resumed the socket every few reads.
 */
const HIGH_WATER = 64;
/** What dump() reads and drops before it closes the connection instead (undici's own bound). */
const DUMP_LIMIT = 128 * 1024;

/** The hold undici's raw handler gives over its response: pause, resume, abort. */
export interface Flow {
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
}

const prematureClose = () => Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });

/**
 * An answer's body as undici's raw handler (`dispatch()`) hands it over: the chunks the socket read,
 * queued until read, with no stream in between. next() waits for one chunk, rest() then takes what
 * else came with it: a fast stream costs one wake-up per network read, not one per event. The
 * socket is paused while HIGH_WATER chunks wait.
 */
export class AnswerBody implements AsyncIterable<Buffer, void, undefined>, AsyncIterator<Buffer, void, undefined> {
  private queue: Buffer[] = [];
  private head = 0;
  private ended = false;
  /** Boxed: a caller's abort reason may be any value, 0 or '' too. */
  private failure: { err: unknown } | undefined;
  private wake: (() => void) | undefined;
  private paused = false;
  /** Set by dump(): chunks are dropped as they come, up to DUMP_LIMIT bytes. */
  private dropping: { bytes: number; done: () => void } | undefined;

  constructor(private readonly flow: Flow) {}

  /** From the handler: a chunk the socket read. */
  push(chunk: Buffer): void {
    if (this.dropping) return this.drop(chunk.length);
    this.queue.push(chunk);
    if (!this.paused && this.queue.length - this.head >= HIGH_WATER) {
      this.paused = true;
      this.flow.pause();
    }
    this.wakeUp();
  }

  /** From the handler: the body is complete. */
  end(): void {
    this.ended = true;
    this.dropping?.done();
    this.wakeUp();
  }

  /** From the handler: the body failed (cut, timed out, aborted). A failure after the end changes nothing. */
  fail(err: unknown): void {
    if (this.ended) return;
    this.failure ??= { err };
    this.dropping?.done();
    this.wakeUp();
  }

  async next(): Promise<IteratorResult<Buffer, void>> {
    while (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      if (this.failure) throw this.failure.err;
      if (this.ended) return { value: undefined, done: true };
      this.resume();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    const chunk = this.queue[this.head++]!;
    if (this.paused && this.queue.length - this.head < HIGH_WATER / 2) this.resume();
    return { value: chunk, done: false };
  }

  /** The chunks already queued, taken at once (none when the next one is still to come). */
  rest(): Buffer[] {
    const taken = this.head === 0 ? this.queue : this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    this.resume();
    return taken;
  }

  /**
   * What is queued, taken at once without waiting: [] when nothing is yet, null at the end. The
   * failure is thrown once the chunks that came before it are taken.
   */
  takeAll(): Buffer[] | null {
    if (this.head < this.queue.length) return this.rest();
    if (this.failure) throw this.failure.err;
    if (this.ended) return null;
    this.resume();
    return [];
  }

  /** Resolves once takeAll() has something to say: a chunk, the end or a failure (at once when it has). */
  whenReadable(): Promise<void> {
    if (this.head < this.queue.length || this.failure || this.ended) return Promise.resolve();
    return new Promise<void>((resolve) => (this.wake = resolve));
  }

  /** Left early: the rest of the body is not read and its connection is closed. */
  async return(): Promise<IteratorResult<Buffer, void>> {
    this.destroy();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer, void, undefined> {
    return this;
  }

  /** The whole body as UTF-8 text. */
  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for (let step = await this.next(); !step.done; step = await this.next()) chunks.push(step.value, ...this.rest());
    return Buffer.concat(chunks).toString('utf8');
  }

  /** Reads the rest of the body and drops it (the connection can serve another request); a long one is cut instead. */
  dump(): Promise<void> {
    if (this.ended || this.failure) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.dropping = { bytes: 0, done: resolve };
      const queued = this.queue.slice(this.head).reduce((n, c) => n + c.length, 0);
      this.queue = [];
      this.head = 0;
      this.resume();
      this.drop(queued);
    });
  }

  /** Stops reading: the connection is closed, and a reader still waiting fails with `err` (or "premature close"). */
  destroy(err?: Error): void {
    if (this.ended || this.failure) return;
    // A caller's abort reason comes as `err`, whatever value it is: only none at all is a premature close.
    const failure = err !== undefined ? err : prematureClose();
    this.failure = { err: failure };
    this.flow.abort(failure as Error);
    this.dropping?.done();
    this.wakeUp();
  }

  private drop(bytes: number): void {
    const dropping = this.dropping!;
    dropping.bytes += bytes;
    if (dropping.bytes > DUMP_LIMIT) this.destroy();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.flow.resume();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
