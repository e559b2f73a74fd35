import type { HttpCore, RawResponse, RequestOptions } from '../core.js';
import { bodyError } from '../connection-errors.js';
import { ConnectionError, malformedEvent, TimeoutError } from '../errors.js';
import { checkShape, type AnswerShape } from '../answer-shape.js';
import { EventSplitter, type FastPath, type SSEEvent } from '../sse.js';
import { callHeaders, type CallOptions } from './call-options.js';

export { answeringHead, callHeaders, type AnsweringOptions, type CallOptions, type PlainCallOptions } from './call-options.js';

export abstract class Resource {
  constructor(protected readonly core: HttpCore) {}

  /** A JSON request with the call's signal, timeout and headers; resolves to the parsed answer. */
  protected async request<T>(method: RequestOptions['method'], path: string, opts: CallOptions, extra: Partial<RequestOptions>, shape: AnswerShape): Promise<T> {
    const { data } = await this.core.json<T>({ method, path, headers: callHeaders(opts), signal: opts.signal, timeoutMs: opts.timeoutMs, ...extra });
    checkShape(data, shape);
    return data;
  }

  /** A POST that answers with an event stream (sent with `accept: text/event-stream`). */
  protected postStream(path: string, body: unknown, opts: CallOptions): Promise<RawResponse> {
    return this.core.send({ method: 'POST', path, body, headers: callHeaders(opts), accept: 'text/event-stream', signal: opts.signal, timeoutMs: opts.timeoutMs, retry: 'paid' });
  }
}

export interface EventStreamOptions<T> {
  /** The `data:` payload that ends the stream (`[DONE]` for chat). */
  terminator?: string | undefined;
  /** Turns one parsed event into the item to yield; throw here for in-stream errors. */
  map: (event: { event: string | undefined; data: unknown; raw: string }) => T;
  /** A failure an item reports about itself: the item is handed out, then the failure thrown. */
  failureOf?: ((item: T) => unknown) | undefined;
  /** Called at the terminator: throw here for a stream that ended complete but said nothing (no choice). */
  atEnd?: (() => void) | undefined;
  /** An item after which the stream is complete (Responses' terminal events). */
  isFinal?: ((item: T) => boolean) | undefined;
  /** A cheaper reading of events straight from the bytes, tried first (it declines what it cannot read). */
  fast?: FastPath<T> | undefined;
  /** The caller's: once aborted, no item is handed out, not even one read before. */
  signal?: AbortSignal | undefined;
  /** The client it answers: the keys it sends are hidden in what its errors quote. */
  core?: object | undefined;
}

/**
 * The JSON events of an event stream, as an async iterable. Events decoded from one network
 * chunk are handed out from a queue, so a fast stream costs one promise per event and no more.
 * A stream that ends without its terminator (or final event) was cut: that is a ConnectionError.
 */
export class EventStream<T> implements AsyncIterable<T, void, undefined> {
  private queue: T[] = [];
  private head = 0;
  private finished = false;
  /** An error event, thrown once the items before it have been handed out. */
  private failure: unknown;

  private readonly events: EventSplitter<T>;

  constructor(
    private readonly res: RawResponse,
    private readonly url: string,
    private readonly opts: EventStreamOptions<T>,
  ) {
    this.events = new EventSplitter(opts.fast);
  }

  /** The wait for the next event, while the reader waits on the network: bytes that are no event (keep-alive comments) do not end it. */
  private idle: NodeJS.Timeout | undefined;

  private waitForNetwork(): Promise<void> {
    const ms = this.res.timeoutMs;
    if (ms && !this.idle) {
      const host = new URL(this.url).host;
      this.idle = setTimeout(() => this.res.body.destroy(new TimeoutError(`timed out waiting for ${host}: no event of the stream (keep-alive comments are none)`, { maybeDelivered: true })), ms);
      this.idle.unref();
    }
    return this.res.body.whenReadable();
  }

  private eventSeen(): void {
    clearTimeout(this.idle);
    this.idle = undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<T, void, undefined> {
    return {
      next: async () => ((await this.ready()) ? { value: this.queue[this.head++]!, done: false } : { value: undefined, done: true }),
      return: async () => {
        await this.close();
        return { value: undefined, done: true };
      },
    };
  }

  /** The same items, in the arrays decoded from each read of the network: one promise per read, not per item. */
  async *batches(): AsyncGenerator<T[], void, undefined> {
    let ended = false;
    try {
      for (;;) {
        if (this.opts.signal?.aborted) await this.stopAborted();
        if (this.head < this.queue.length) {
          const batch = this.head === 0 ? this.queue : this.queue.slice(this.head);
          this.queue = [];
          this.head = 0;
          yield batch;
          continue;
        }
        if (this.failure) throw this.failure;
        if (this.finished) break;
        const wait = this.advance();
        if (wait) await wait;
      }
      ended = true;
    } finally {
      // Left early (a break, an error of the reader): the body is released as the iterator's return() does.
      if (!ended) await this.close();
    }
  }

  /** Whether an item waits in the queue, reading on until one does; false at the end. */
  private async ready(): Promise<boolean> {
    if (this.opts.signal?.aborted) await this.stopAborted();
    while (this.head >= this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      if (this.failure) throw this.failure;
      if (this.finished) return false;
      const wait = this.advance();
      if (wait) await wait;
    }
    return true;
  }

  /**
   * Reads what the body holds into the queue, at once; else the wait for more. A stream that cannot
   * be read on is released at once: nothing may wait on its body.
   */
  private advance(): Promise<void> | undefined {
    try {
      return this.fill() ? undefined : this.waitForNetwork();
    } catch (err) {
      this.abort();
      throw err;
    }
  }

  /** The caller aborted: the items a network read brought with the ones handed out are not theirs to read. */
  private async stopAborted(): Promise<never> {
    this.queue = [];
    this.head = 0;
    await this.close();
    throw this.opts.signal!.reason;
  }

  private async close(): Promise<void> {
    this.eventSeen();
    this.finished = true;
    await this.res.body.return();
  }

  /** Decodes the chunks the body holds now (what one read of the network brought, and any after it); false when it holds none yet. */
  private fill(): boolean {
    let chunks: Buffer[] | null;
    try {
      chunks = this.res.body.takeAll();
    } catch (err) {
      throw bodyError(err, this.url);
    }
    if (chunks === null) {
      this.eventSeen();
      this.events.end(this.onEvent);
      if (!this.finished) throw new ConnectionError('the stream ended before it was complete', { maybeDelivered: true, code: 'cut' });
      return true;
    }
    for (const chunk of chunks) {
      if (this.finished) break;
      // Part of an event (a long one arrives in many reads) is progress; keep-alive comments are not.
      if (!onlyComments(chunk)) this.eventSeen();
      this.events.push(chunk, this.onItem, this.onEvent);
    }
    return chunks.length > 0;
  }

  private readonly onItem = (item: T): void => {
    this.eventSeen();
    this.queue.push(item);
  };

  /** One event read in full; false once the stream is over (its end, an error event, a malformed event). */
  private readonly onEvent = (ev: SSEEvent): boolean => {
    this.eventSeen();
    if (this.opts.terminator !== undefined && ev.data === this.opts.terminator) {
      try {
        this.opts.atEnd?.();
      } catch (err) {
        this.failure = err;
      }
      this.finish();
      return false;
    }
    let data: unknown;
    try {
      data = JSON.parse(ev.data);
    } catch {
      // Handed out after the items before it, as an error event is.
      this.failure = malformedEvent(this.opts.core ?? {}, ev.data);
      this.abort();
      return false;
    }
    this.opts.fast?.learn(ev.data, data);
    let item: T;
    try {
      item = this.opts.map({ event: ev.event, data, raw: ev.data });
    } catch (err) {
      // An error event: the items before it are handed out first; the server may keep the line open.
      this.failure = err;
      this.finished = true;
      this.abort();
      return false;
    }
    this.queue.push(item);
    const failure = this.opts.failureOf?.(item);
    if (failure) {
      this.failure = failure;
      this.abort();
      return false;
    }
    if (this.opts.isFinal?.(item)) {
      this.finish();
      return false;
    }
    return true;
  };

  private finish(): void {
    this.eventSeen();
    this.finished = true;
    void this.res.body.dump().catch(() => {});
  }

  private abort(): void {
    this.eventSeen();
    this.finished = true;
    this.res.body.destroy();
  }
}

/** Whether a network read holds nothing but SSE comment lines (`: PROCESSING`) and blank lines. */
function onlyComments(chunk: Buffer): boolean {
  let start = 0;
  while (start < chunk.length) {
    const nl = chunk.indexOf(10, start);
    const end = nl === -1 ? chunk.length : nl;
    if (end > start && chunk[start] !== 0x3a && !(end - start === 1 && chunk[start] === 13)) return false;
    start = end + 1;
  }
  return true;
}
