import type { Dispatcher } from 'undici';
import { SseSplitter, type EventBytes } from './sse.js';
import { ProviderFailure, type EndRule } from './types.js';
import { failureOf } from './undici-failure.js';
import { carriesAnswer } from './first-answer.js';

type Controller = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[0];
/** Events that may wait unread before the upstream's socket is paused. */
const HIGH_WATER = 64;
/** What the reader is given for an event its `takeBytes` took: no payload can be it (a stream's \r is a line end). */
export const TAKEN = '\r';

/**
 * An upstream's event stream as undici's raw handler hands it over: split into payloads as bytes
 * arrive, queued, with no stream or generator in between. next() waits for one payload; takeQueued()
 * then takes, without waiting, those that came with it (one wake-up per network read, not per event).
 * Throws ProviderFailure where the stream broke, when it ended before its end (`rule`), or when one
 * event grew past `maxEvent` characters (the upstream is then let go).
 */
export class UpstreamEvents implements AsyncIterableIterator<string> {
  /**
   * The payloads not yet read: `queue[head]` to `queue[tail - 1]`. The array is kept, its slots emptied as
   * they are read: one made anew each time it emptied (one per event, as a stream's reader keeps up)
   * was ~185 bytes an event on the young generation. A one-line event whole in one network read is kept
   * as that read, its payload `from` to `to` there: decoded when it is read, unless `takeBytes` takes it.
   */
  private queue: (string | Buffer | undefined)[] = [];
  private readonly from: number[] = [];
  private readonly to: number[] = [];
  private head = 0;
  private tail = 0;
  private ended = false;
  private sawEnd = false;
  private failure: ProviderFailure | undefined;
  /** The reader polling (poll()), called on a tick of its own once there is something to tell it. */
  private ready: (() => void) | undefined;
  /** The reader waiting in next(), settled as soon as there is something to tell it. */
  private waiter: { resolve: (r: IteratorResult<string>) => void; reject: (err: unknown) => void } | undefined;
  private paused = false;
  private readonly splitter: SseSplitter;
  /** Told once, at the first event with some of an answer (`first_event_timeout_ms`: not pings, not a role-only chunk). */
  firstEvent: (() => void) | undefined;
  /** The timer that fires `idleMs` after the last event. */
  private idleTimer: NodeJS.Timeout | undefined;
  /** Whether an event with some of an answer came: the idle timer runs from then (a model thinks silently before it). */
  private answered = false;
  /** The last event parsed to judge it, and what it parsed to: the relay parses a stream's first events too (once is enough). */
  private parsedData: string | undefined;
  private parsedEvent: unknown;
  private readonly add = (data: string) => {
    this.enqueue(data, 0, 0);
    this.sawEnd ||= this.rule.ends(data);
    // Parsed only until the first answer: first_event_timeout_ms's timer is let go once, then unset.
    this.heard(this.judging && this.carriesAnswer(data));
  };

  /**
   * Set by the reader: asked, as it reads an event still in its bytes, to take it from them (true: it
   * did, and is given TAKEN); else the event is decoded for it. It must take no stream's end.
   */
  takeBytes: EventBytes | undefined;
  /** An event in its bytes, queued as they are, unless it must be judged now (an event before the first answer). */
  private readonly keepBytes: EventBytes = (piece, start, end) => {
    if (this.judging) return false;
    this.enqueue(piece, start, end);
    this.heard(false);
    return true;
  };

  private enqueue(item: string | Buffer, from: number, to: number): void {
    if (this.tail < this.queue.length) {
      this.queue[this.tail] = item;
      this.from[this.tail] = from;
      this.to[this.tail] = to;
    } else {
      this.queue.push(item);
      this.from.push(from);
      this.to.push(to);
    }
    this.tail++;
  }

  /** Whether an event is still judged: no answer came yet, and a timer waits for one. */
  private get judging(): boolean {
    return !this.answered && (this.firstEvent !== undefined || this.idleMs !== undefined);
  }

  /** An event came (`answers`: with some of an answer): the first-event and idle timers told. */
  private heard(answers: boolean): void {
    if (answers && !this.answered) {
      this.answered = true;
      if (this.firstEvent) this.firstEvent = void this.firstEvent();
    }
    if (this.answered && this.idleMs !== undefined) this.stamp(this.idleMs);
  }

  constructor(
    private readonly controller: Controller,
    private readonly name: string,
    private readonly rule: EndRule,
    maxEvent = Infinity,
    private readonly idleMs?: number,
    /** A Responses stream (its events judged as such by carriesAnswer), not a chat one. */
    private readonly responses = false,
  ) {
    this.splitter = new SseSplitter(maxEvent);
  }

  /** carriesAnswer(), the event kept as parsed for the relay's own parse of it (takeParsed). */
  private carriesAnswer(data: string): boolean {
    this.parsedData = data;
    this.parsedEvent = undefined;
    return carriesAnswer(data, this.responses, this.keepParsed);
  }

  private readonly keepParsed = (event: unknown) => {
    this.parsedEvent = event;
  };

  /** What `data` parsed to when carriesAnswer judged it, given once; undefined when it was not the last judged. */
  takeParsed(data: string): unknown {
    if (this.parsedData !== data) return undefined;
    const event = this.parsedEvent;
    this.parsedData = this.parsedEvent = undefined;
    return event;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** From the handler: bytes the socket read. */
  push(chunk: Buffer): void {
    if (this.ended) return;
    try {
      this.splitter.push(chunk, this.add, this.keepBytes);
    } catch (err) {
      // An event without end: the events before it are still read, then the break; the upstream is let go.
      this.fail(err);
      this.controller.abort(err as Error);
      return;
    }
    if (!this.paused && this.tail - this.head >= HIGH_WATER) {
      this.paused = true;
      this.controller.pause();
    }
    this.wakeUp();
  }

  /**
   * An event came: one timer per stream, armed at the first and moved on at each (refresh(): the loop's
   * clock, nothing allocated). Its closure made apart (idleCheck): a function that makes one gets its
   * context at every call, those that only refresh too (~100 bytes an event).
   */
  private stamp(ms: number): void {
    if (this.idleTimer) this.idleTimer.refresh();
    else this.idleTimer = this.idleCheck(ms);
  }

  /** The idle timer, armed. A wait while events sit unread or the upstream is paused (a slow caller) is no silence. */
  private idleCheck(ms: number): NodeJS.Timeout {
    return setTimeout(() => {
      if (this.ended) return;
      if (this.paused || this.head < this.tail) return void this.idleTimer!.refresh();
      const idle = new ProviderFailure('timeout', `${this.name}: no event within idle_timeout_ms (${ms} ms)`);
      this.fail(idle);
      this.controller.abort(idle);
    }, ms).unref();
  }

  /** From the handler: the body is complete; without its end event, that is a break. */
  end(): void {
    clearTimeout(this.idleTimer);
    if (this.ended) return;
    if (!this.sawEnd && !this.endQueued()) this.failure = new ProviderFailure('broken', `${this.name}: the stream ended before its end (no [DONE] or final event)`);
    this.ended = true;
    this.wakeUp();
  }

  /** From the handler (or the caller's abort): the body broke. */
  fail(err: unknown): void {
    clearTimeout(this.idleTimer);
    if (this.ended) return;
    this.failure = err instanceof ProviderFailure ? err : failureOf(err, this.name, true);
    this.ended = true;
    this.wakeUp();
  }

  next(): Promise<IteratorResult<string>> {
    if (this.head < this.tail) return Promise.resolve({ value: this.shift(), done: false });
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /**
   * next() without a promise a read: 'queued' when events are here (eachQueued takes them), 'ended', or
   * 'waiting': `ready` is then called once, on a tick of its own (the events of one network read
   * together), when that changes. Throws where the stream broke.
   */
  poll(ready: () => void): 'queued' | 'ended' | 'waiting' {
    if (this.head < this.tail) return 'queued';
    if (this.failure) throw this.failure;
    if (this.ended) return 'ended';
    this.ready = ready;
    return 'waiting';
  }

  /**
   * Gives the payloads already here to `relayed`, in order, without waiting; true when it says the stream is
   * over (those after it are dropped).
   */
  eachQueued(relayed: (data: string) => boolean): boolean {
    while (this.head < this.tail) {
      if (!relayed(this.shift())) continue;
      this.queue.fill(undefined, this.head, this.tail);
      this.head = this.tail = 0;
      this.resumeIfPaused();
      return true;
    }
    return false;
  }

  /** A reader that stops early lets the upstream go, unless its end already came (the connection is kept). */
  return(): Promise<IteratorResult<string>> {
    clearTimeout(this.idleTimer);
    if (!this.ended && !this.sawEnd && !this.endQueued()) this.controller.abort(new Error('the reader stopped'));
    this.ended = true;
    this.queue = [];
    this.head = this.tail = 0;
    this.wakeUp();
    return Promise.resolve({ value: undefined, done: true });
  }

  private shift(): string {
    const at = this.head;
    const value = this.queue[at]!;
    this.queue[this.head++] = undefined;
    if (this.head === this.tail) this.head = this.tail = 0;
    this.resumeIfPaused();
    if (typeof value === 'string') return value;
    if (this.takeBytes?.(value, this.from[at]!, this.to[at]!)) return TAKEN;
    const data = value.toString('utf8', this.from[at], this.to[at]);
    this.sawEnd ||= this.rule.ends(data);
    return data;
  }

  /** Whether the stream's end is among the events queued in their bytes (each looked at decoded, once; the last first, where it is). */
  private endQueued(): boolean {
    for (let at = this.tail - 1; at >= this.head; at--) {
      const value = this.queue[at];
      if (typeof value === 'string') continue;
      const data = value!.toString('utf8', this.from[at], this.to[at]);
      this.queue[at] = data;
      if (this.rule.ends(data)) return (this.sawEnd = true);
    }
    return false;
  }

  private resumeIfPaused(): void {
    if (this.paused && this.tail - this.head < HIGH_WATER / 2) {
      this.paused = false;
      this.controller.resume();
    }
  }

  /** Settles a waiting next() as it would now answer (one promise per wait, not a wait and a second next()). */
  private wakeUp(): void {
    const ready = this.ready;
    if (ready && (this.head < this.tail || this.ended)) {
      this.ready = undefined;
      process.nextTick(ready);
    }
    const waiter = this.waiter;
    if (!waiter) return;
    if (this.head < this.tail) {
      this.waiter = undefined;
      waiter.resolve({ value: this.shift(), done: false });
    } else if (this.failure) {
      this.waiter = undefined;
      waiter.reject(this.failure);
    } else if (this.ended) {
      this.waiter = undefined;
      waiter.resolve({ value: undefined, done: true });
    }
  }
}
