import type { Dispatcher } from 'undici';
import { ProviderFailure, passesOver, type EndRule, type StopSignal, type UpstreamReply } from './types.js';
import { UpstreamEvents } from './upstream-events.js';
import { failureOf } from './undici-failure.js';
import { answerText, mib, REFUSAL_BYTES, statusFailure } from './bounded.js';
import { isSecretHeader } from '../../internal/secret-headers.js';

export { UpstreamEvents } from './upstream-events.js';
export { failureOf } from './undici-failure.js';

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

export interface UpstreamCall {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  signal: StopSignal;
  /** The provider's slug, for failures' words. */
  name: string;
  /** What a 401 or 403 says to check (bounded.ts keyHint). */
  keyHint?: string;
  /** Whether an event stream was asked for (a 200 event stream is then relayed as it comes). */
  stream: boolean;
  /** The event that ends a stream ([DONE], a Responses final event). */
  ends: EndRule;
  /** The largest whole answer, or single stream event, taken (`max_answer_mb`): past it the provider is passed over. */
  maxAnswer: number;
  /** `timeout_ms`: the wait for the answer's head and between two pieces of it, named when it runs out. */
  timeoutMs?: number;
  /** `first_event_timeout_ms`: the longest wait from the request for a stream's first event or a whole answer. */
  firstEventMs?: number;
  /** `idle_timeout_ms`: the longest wait between a stream's events, from its first answering one (comments do not count). */
  idleMs?: number;
  /** A Responses stream, not a chat one: which rules say its first answer. */
  responses?: boolean;
}

/**
 * POSTs to an upstream through undici's raw handler (`dispatch()`): a 200 event stream is split as it
 * arrives (UpstreamEvents), any other answer read whole. request()'s body stream, and the two
 * generators over it, cost a stream's bookkeeping and several promises per event. Throws
 * ProviderFailure for a refused or timed-out request, for the statuses the gateway passes over (with
 * the first 4 KiB of their body, and their `Retry-After`), and for a whole answer larger than
 * `maxAnswer` bytes (read no further).
 */
export function upstreamCall(agent: Pick<Dispatcher, 'dispatch'>, call: UpstreamCall): Promise<UpstreamReply> {
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
    const refused = () => statusFailure(name, status, answerText(status, kept, Buffer.concat(whole ?? [])), kept['retry-after'], call.keyHint);
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
      if (events) events.fail(failureOf(why, name, true, call.timeoutMs));
      else if (!settled) {
        settled = true;
        reject(failureOf(why, name, false, call.timeoutMs));
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
            events = new UpstreamEvents(c, name, call.ends, call.maxAnswer, call.idleMs, call.responses);
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
          if (events) return events.fail(failureOf(err, name, true, call.timeoutMs));
          if (settled) return;
          settled = true;
          // A status passed over whose body broke is still that status.
          if (whole && passesOver(status)) reject(refused());
          else reject(failureOf(err, name, false, call.timeoutMs));
        },
      },
    );
  });
}
