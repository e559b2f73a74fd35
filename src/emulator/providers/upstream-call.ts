import type { Dispatcher } from 'undici';
import { SseSplitter } from './sse.js';
import { ProviderFailure, passesOver, type StopSignal, type UpstreamReply } from './types.js';
import { answerText, mib, REFUSAL_BYTES, statusFailure } from './bounded.js';
import { carriesAnswer } from './first-answer.js';
import { isSecretHeader } from '../../internal/secret-headers.js';

type Controller = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[0];

/** Header names seen, each to its kept name (lower case), or null when it is left out: one test per name, not per answer. */
const keptNames = new Map<string, string | null>();

/** Headers of an upstream's answer that a cassette or a log may keep: none that isSecretHeader names. */
export function publicHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in headers) {
    const v = headers[k];
    if (v === undefined) continue;
    let name = keptNames.get(k);
    if (name === undefined) {
      name = isSecretHeader(k) ? null : k.toLowerCase();
      if (keptNames.size < 1024) keptNames.set(k, name);
    }
    if (name !== null) out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Why undici gave up, in the words of a provider failure. */
export function failureOf(err: unknown, name: string, started: boolean): ProviderFailure {
  if (err instanceof ProviderFailure) return err;
  const code = (err as { code?: string })?.code ?? '';
  const unreached = new Map([['ECONNREFUSED', 'connection refused'], ['ENOTFOUND', 'host not found'], ['EAI_AGAIN', 'host not found'], ['EHOSTUNREACH', 'host not reachable']]).get(code);
  if (unreached) return new ProviderFailure('refused', `${name}: ${unreached} (${code})`);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return new ProviderFailure('timeout', `${name}: timed out`);
  const what = started ? 'stream broken' : 'connection lost';
  return new ProviderFailure('broken', `${name}: ${what} (${code || (err as Error)?.message || String(err)})`);
}

/** Events that may wait unread before the upstream's socket is paused. */
const HIGH_WATER = 64;

/**
 * An upstream's event stream as undici's raw handler hands it over: split into payloads as bytes
 * arrive, queued, with no stream or generator in between. next() waits for one payload; takeQueued()
 * then takes, without waiting, those that came with it (one wake-up per network read, not per event).
 * Throws ProviderFailure where the stream broke, when it ended before its end (`ends`), or when one
 * event grew past `maxEvent` characters (the upstream is then let go).
 */
export class UpstreamEvents implements AsyncIterableIterator<string> {
  private queue: string[] = [];
  private head = 0;
  private ended = false;
  private sawEnd = false;
  private failure: ProviderFailure | undefined;
  /** The reader waiting in next(), settled as soon as there is something to tell it. */
  private waiter: { resolve: (r: IteratorResult<string>) => void; reject: (err: unknown) => void } | undefined;
  private paused = false;
  private readonly splitter: SseSplitter;
  /** Told once, at the first event with some of an answer (`first_event_timeout_ms`: not pings, not a role-only chunk). */
  firstEvent: (() => void) | undefined;
  private readonly add = (data: string) => {
    this.queue.push(data);
    if (!this.sawEnd && this.ends(data)) this.sawEnd = true;
    // Parsed only until the first answer: the timer is let go once, then unset.
    if (this.firstEvent && carriesAnswer(data)) this.firstEvent = void this.firstEvent();
  };

  constructor(
    private readonly controller: Controller,
    private readonly name: string,
    private readonly ends: (data: string) => boolean,
    maxEvent = Infinity,
  ) {
    this.splitter = new SseSplitter(maxEvent);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** From the handler: bytes the socket read. */
  push(chunk: Buffer): void {
    if (this.ended) return;
    try {
      this.splitter.push(chunk, this.add);
    } catch (err) {
      // An event without end: the events before it are still read, then the break; the upstream is let go.
      this.fail(err);
      this.controller.abort(err as Error);
      return;
    }
    if (!this.paused && this.queue.length - this.head >= HIGH_WATER) {
      this.paused = true;
      this.controller.pause();
    }
    this.wakeUp();
  }

  /** From the handler: the body is complete; without its end event, that is a break. */
  end(): void {
    if (this.ended) return;
    if (!this.sawEnd) this.failure = new ProviderFailure('broken', `${this.name}: the stream ended before its end (no [DONE] or final event)`);
    this.ended = true;
    this.wakeUp();
  }

  /** From the handler (or the caller's abort): the body broke. */
  fail(err: unknown): void {
    if (this.ended) return;
    this.failure = err instanceof ProviderFailure ? err : failureOf(err, this.name, true);
    this.ended = true;
    this.wakeUp();
  }

  next(): Promise<IteratorResult<string>> {
    if (this.head < this.queue.length) return Promise.resolve({ value: this.shift(), done: false });
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** The payloads already here, taken at once (empty when none). */
  takeQueued(): string[] {
    if (this.head >= this.queue.length) return [];
    const out = this.head ? this.queue.slice(this.head) : this.queue;
    this.queue = [];
    this.head = 0;
    this.resumeIfPaused();
    return out;
  }

  /** A reader that stops early lets the upstream go, unless its end already came (the connection is kept). */
  return(): Promise<IteratorResult<string>> {
    if (!this.ended && !this.sawEnd) this.controller.abort(new Error('the reader stopped'));
    this.ended = true;
    this.queue = [];
    this.head = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  private shift(): string {
    const value = this.queue[this.head++]!;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    this.resumeIfPaused();
    return value;
  }

  private resumeIfPaused(): void {
    if (this.paused && this.queue.length - this.head < HIGH_WATER / 2) {
      this.paused = false;
      this.controller.resume();
    }
  }

  /** Settles a waiting next() as it would now answer (one promise per wait, not a wait and a second next()). */
  private wakeUp(): void {
    const waiter = this.waiter;
    if (!waiter) return;
    if (this.head < this.queue.length) {
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

export interface UpstreamCall {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  signal: StopSignal;
  /** The provider's slug, for failures' words. */
  name: string;
  /** Whether an event stream was asked for (a 200 event stream is then relayed as it comes). */
  stream: boolean;
  /** The event that ends a stream ([DONE], a Responses final event). */
  ends: (data: string) => boolean;
  /** The largest whole answer, or single stream event, taken (`max_answer_mb`): past it the provider is passed over. */
  maxAnswer: number;
  /** `first_event_timeout_ms`: the longest wait from the request for a stream's first event or a whole answer. */
  firstEventMs?: number;
}

/**
 * POSTs to an upstream through undici's raw handler (`dispatch()`): a 200 event stream is split as it
 * arrives (UpstreamEvents), any other answer read whole. request()'s body stream, and the two
 * generators over it, cost a stream's bookkeeping and several promises per event. Throws
 * ProviderFailure for a refused or timed-out request, for the statuses the gateway passes over (with
 * the first 4 KiB of their body, and their `Retry-After`), and for a whole answer larger than
 * `maxAnswer` bytes (read no further).
 */
export function upstreamCall(agent: Dispatcher, call: UpstreamCall): Promise<UpstreamReply> {
  const { signal, name } = call;
  return new Promise((resolve, reject) => {
    let controller: Controller | undefined;
    let events: UpstreamEvents | undefined;
    let whole: Buffer[] | undefined;
    let size = 0;
    let status = 0;
    let kept: Record<string, string> = {};
    let settled = false;
    let firstEventTimer: NodeJS.Timeout | undefined;
    const stop = () => {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(firstEventTimer);
    };
    /** A status passed over, in words: its body's first bytes, its `Retry-After`. */
    const refused = () => statusFailure(name, status, answerText(status, kept, Buffer.concat(whole ?? [])), kept['retry-after']);
    /** Settles before the body's end (too large, or enough of a refusal read), and lets the upstream go. */
    const giveUp = (c: Controller, failure: ProviderFailure) => {
      settled = true;
      stop();
      reject(failure);
      c.abort(failure);
    };
    const onAbort = () => {
      const why = signal.reason instanceof Error ? signal.reason : new Error('aborted');
      clearTimeout(firstEventTimer);
      if (events) events.fail(failureOf(why, name, true));
      else if (!settled) {
        settled = true;
        reject(failureOf(why, name, false));
      }
      controller?.abort(why);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    // Keep-alive comments reset undici's body timeout: a provider that only pings is let go here.
    if (call.firstEventMs !== undefined) {
      firstEventTimer = setTimeout(() => {
        const late = new ProviderFailure('timeout', `${name}: no answer within first_event_timeout_ms (${call.firstEventMs} ms)`);
        if (events) events.fail(late);
        else if (!settled) {
          settled = true;
          stop();
          reject(late);
        }
        controller?.abort(late);
      }, call.firstEventMs);
      firstEventTimer.unref();
    }
    agent.dispatch(
      { origin: call.origin, path: call.path, method: 'POST', headers: call.headers, body: call.body },
      {
        onRequestStart(c) {
          controller = c;
          if (signal.aborted) c.abort(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        },
        onResponseStart(c, statusCode, headers) {
          if (statusCode < 200 || settled) return;
          status = statusCode;
          kept = publicHeaders(headers as Record<string, string | string[] | undefined>);
          if (call.stream && status === 200 && String(kept['content-type'] ?? '').startsWith('text/event-stream')) {
            events = new UpstreamEvents(c, name, call.ends, call.maxAnswer);
            if (firstEventTimer) events.firstEvent = () => clearTimeout(firstEventTimer);
            settled = true;
            resolve({ kind: 'stream', status, headers: kept, events });
          } else whole = [];
        },
        onResponseData(c, chunk) {
          if (events) return events.push(chunk);
          if (!whole || settled) return;
          whole.push(chunk);
          size += chunk.length;
          if (passesOver(status)) {
            if (size >= REFUSAL_BYTES) giveUp(c, refused());
          } else if (size > call.maxAnswer) giveUp(c, new ProviderFailure('broken', `${name}: an answer larger than ${mib(call.maxAnswer)}`));
        },
        onResponseEnd() {
          stop();
          if (events) return events.end();
          if (settled) return;
          settled = true;
          if (passesOver(status)) reject(refused());
          else resolve({ kind: 'json', status, headers: kept, text: answerText(status, kept, Buffer.concat(whole ?? [])) });
        },
        onResponseError(_, err) {
          stop();
          if (events) return events.fail(err);
          if (settled) return;
          settled = true;
          // A status passed over whose body broke is still that status.
          if (whole && passesOver(status)) reject(refused());
          else reject(failureOf(err, name, false));
        },
      },
    );
  });
}
