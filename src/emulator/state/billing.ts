import type { Ctx } from '../http/http.js';
import { HttpError } from '../http/http.js';
import { Serialized } from '../http/serialized.js';
import { decimal } from '../../internal/decimal.js';
import { round } from '../models/models.js';
import { limitRemaining } from './key-usage.js';
import { chargeWritten, refuseUnsaved } from './unsaved-charges.js';
import type { KeyRecord } from './store-api.js';

/** What each key's requests in flight hold and have not settled yet (in memory: a crash's holds are given back). */
const heldByKey = new WeakMap<KeyRecord, number>();
/** Holds `cost` on the key in memory (negative: gives it back); a batch's requests in flight hold here too (batch-credits.ts). */
export const holdOnKey = (key: KeyRecord, cost: number) => heldByKey.set(key, round((heldByKey.get(key) ?? 0) + cost));
/** What the key's requests in flight hold, its own and its batches': its limit less this is what it may still spend. */
export const heldOnKey = (key: KeyRecord): number => heldByKey.get(key) ?? 0;

/**
 * What unbounded requests in flight hold as an estimate, by store and workspace: in memory only, so
 * such a request writes one journal line (its charge), and a crash gives it back as it gives open holds back.
 */
const estimatesHeld = new WeakMap<object, Map<string, number>>();
const estimated = (ctx: Ctx) => estimatesHeld.get(ctx.store)?.get(ctx.workspace) ?? 0;
function holdEstimateOn(ctx: Ctx, cost: number): void {
  let held = estimatesHeld.get(ctx.store);
  if (!held) estimatesHeld.set(ctx.store, (held = new Map()));
  // A workspace's entry stays at 0, not deleted: a Map as long-lived as this one made a new table in the
  // old generation each time an entry in and out per request grew or shrank it.
  held.set(ctx.workspace, Math.max(0, round((held.get(ctx.workspace) ?? 0) + cost)));
}

/** The caller's workspace's balance less what its unbounded requests in flight hold. */
export function balanceLeft(ctx: Ctx): number {
  return round(ctx.store.balance(ctx.workspace) - estimated(ctx));
}

/**
 * 403 when the calling key's spending limit, less what its requests in flight hold, is spent or does
 * not cover a cost known up front, as the real service answers ("Key limit exceeded (monthly limit). …").
 */
function withinKeyLimit(ctx: Ctx, cost: number): void {
  const limit = limitRemaining(ctx.key, ctx.store.now());
  const left = limit === null ? null : round(limit - (heldByKey.get(ctx.key) ?? 0));
  if (left === null || (left > 0 && cost <= left)) return;
  throw new HttpError(403, `Key limit exceeded (${ctx.key.limit_reset ?? 'total'} limit). Manage it using https://openrouter.ai/settings/keys`, 'permission_denied');
}

/** What the calling key may still spend now, less what its requests in flight hold; null without a limit. */
export function keyLimitLeft(ctx: Ctx): number | null {
  const limit = limitRemaining(ctx.key, ctx.store.now());
  return limit === null ? null : round(limit - (heldByKey.get(ctx.key) ?? 0));
}

/** 402 when the caller's workspace has no credit left (batches: their cost is known only at the end); 403 when its key's limit is spent. */
export function chargeable(ctx: Ctx): void {
  refuseUnsaved(ctx);
  withinKeyLimit(ctx, 0);
  if (balanceLeft(ctx) <= 0) throw insufficient(ctx);
}

/**
 * Takes a request's cost before it is served (the emulator knows it up front): 402 when the balance
 * (less what unbounded gateway requests in flight hold) does not cover it, so the balance never goes
 * below zero, concurrent requests included. `refund` gives it back (a request not answered).
 */
export async function reserve(ctx: Ctx, cost: number): Promise<{ refund(): void }> {
  if (cost > 0) refuseUnsaved(ctx);
  withinKeyLimit(ctx, cost);
  // What unbounded gateway requests in flight hold is not the balance's to give (as holdUntilSettled).
  if ((estimated(ctx) > 0 && balanceLeft(ctx) < cost) || !ctx.store.hold(ctx.workspace, cost, ctx.key.key, ctx.paying)) throw insufficient(ctx, cost);
  const refund = () => ctx.store.refund(ctx.workspace, cost, ctx.key.key, ctx.paying);
  if (cost > 0) {
    chargeWritten(ctx, refund);
  }
  return { refund };
}

/**
 * Every 402 for credits a request lacks, in one wording: what it costs (`upTo`: the most it may cost;
 * no cost: one not known before the answer, which needs a balance above zero) and the balance, what
 * unbounded requests in flight hold of it said, as it is not left to spend.
 */
function insufficient(ctx: Ctx, cost?: number, upTo = false): HttpError {
  const balance = ctx.store.balance(ctx.workspace);
  return new HttpError(402, `${creditsShort('this request', cost, upTo, balance, estimated(ctx))}. Add more credits to continue.`, 'payment_required');
}

/**
 * The one wording of credits a request lacks (this file's 402s; a batch over providers stopped short,
 * batch-credits.ts): `what` and what it costs, the balance, and what requests in flight hold of it.
 */
export function creditsShort(what: string, cost: number | undefined, upTo: boolean, balance: number, heldInFlight = 0): string {
  const left = Math.max(0, balance);
  const held = Math.min(left, heldInFlight);
  const inFlight = held > 0 ? `, of which $${decimal(held)} is held by requests in flight` : '';
  const needs = cost === undefined ? 'needs a balance above $0' : `${upTo ? 'may cost up to' : 'costs'} $${decimal(cost)}`;
  return `Insufficient credits: ${what} ${needs}, the balance is $${decimal(left)}${inFlight}`;
}

/**
 * Holds a request's most cost until `settle` says what it came to (the difference charged or given
 * back): 402 as `reserve` (`bound`: the cost is a bound, and said as one). A hold a crash left open
 * is given back at the next start.
 */
export function holdUntilSettled(ctx: Ctx, cost: number, bound = false): { settle(cost: number): void } {
  if (cost > 0) refuseUnsaved(ctx);
  withinKeyLimit(ctx, cost);
  const hold = estimated(ctx) > 0 && balanceLeft(ctx) < cost ? 0 : ctx.store.holdRequest(ctx.workspace, cost);
  if (!hold) throw insufficient(ctx, cost, bound);
  holdOnKey(ctx.key, cost);
  let settled = false;
  const settle = (real: number) => {
    if (settled) return;
    settled = true;
    holdOnKey(ctx.key, -cost);
    ctx.store.settleRequest(ctx.workspace, hold, real, ctx.key.key, ctx.paying);
  };
  // On disk before the answer begins (a 503 when the hold could not be written).
  if (cost > 0) chargeWritten(ctx, () => settle(0));
  return { settle };
}

/**
 * Holds an unbounded request's estimate (`cost`, at most what is left) on the workspace and the key
 * in memory until `release`, called before its real cost is charged; the caller asks `chargeable` first.
 */
export function holdEstimate(ctx: Ctx, cost: number): { release(): void } {
  holdOnKey(ctx.key, cost);
  holdEstimateOn(ctx, cost);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      holdOnKey(ctx.key, -cost);
      holdEstimateOn(ctx, -cost);
    },
  };
}

/** Answers 200 as an event stream; the function says whether the caller has gone since. */
export function openEventStream(ctx: Ctx): () => boolean {
  let closed = false;
  ctx.res.on('close', () => (closed = true));
  ctx.head(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return () => closed;
}

/** How far a stream went: events written to the caller, and whether it hung up before the end. */
export interface StreamProgress {
  sent: number;
  hungUp: boolean;
  /** Called once every event is out, just before the end is written (where a stream is charged). */
  beforeEnd?: () => void;
  /** Told each event as it is framed (to count the content it carries)… */
  count?: (event: unknown) => void;
  /** …and told when the events framed so far were written to the caller. */
  written?: () => void;
}

const hungUp = (progress: StreamProgress | undefined): false => {
  if (progress) progress.hungUp = true;
  return false;
};

/** Frames are gathered into writes of about this size: one syscall for many events. */
const WRITE_BYTES = 32 * 1024;
/** A stream waits for its client only once this much is written and not yet sent. */
const LOOKAHEAD_BYTES = 1024 * 1024;

/**
 * Writes events (produced lazily, `count` of them) as an SSE stream with backpressure, many events
 * per write, yielding to other clients between writes. Stream faults: `cut` drops the connection
 * after N events, `error-chunk` sends `errorEvent` after N events and ends (made then when it is a function of N,
 * as a Responses `response.failed` says what went out before it), `malformed` sends an
 * event whose data is not JSON after N events and ends.
 * Returns true when the whole stream was delivered; `progress` says how many events were written
 * and whether the caller hung up (not a fault).
 */
export async function writeSSE(ctx: Ctx, events: Iterable<unknown>, count: number, errorEvent: unknown, terminator?: string, eventName?: (e: unknown) => string | undefined, progress?: StreamProgress): Promise<boolean> {
  const res = ctx.res;
  ctx.head(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.write(': ROUTER PROCESSING\n\n');
  const fault = ctx.fault;
  const cutAt = fault?.kind === 'cut' ? (fault.after ?? Math.floor(count / 2)) : -1;
  const errorAt = fault?.kind === 'error-chunk' ? (fault.after ?? Math.floor(count / 2)) : -1;
  const malformedAt = fault?.kind === 'malformed' ? (fault.after ?? Math.floor(count / 2)) : -1;
  const frame = (e: unknown) => {
    const name = e instanceof Serialized ? e.name : eventName?.(e);
    return `${name ? `event: ${name}\n` : ''}data: ${e instanceof Serialized ? e.json : JSON.stringify(e)}\n\n`;
  };
  let closed = false;
  const gone = new Promise<void>((resolve) =>
    res.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  let buffer = '';
  /** Settles once the last write has gone to the socket. */
  let sent = Promise.resolve();
  /** The events framed so far are handed to the socket: counted as written (what a cut stream is charged). */
  const written = () => {
    if (!progress) return;
    progress.sent = i;
    progress.written?.();
  };
  const flush = async () => {
    if (!buffer) return;
    const data = buffer;
    buffer = '';
    written();
    sent = new Promise((resolve) => res.write(data, () => resolve()));
    // Events are made ahead, up to LOOKAHEAD_BYTES, while the client reads those before them.
    if (res.writableLength >= LOOKAHEAD_BYTES) await drainOrClose(res);
    // Let other requests and timers run between writes, even when the socket keeps up.
    else await new Promise((r) => setImmediate(r));
  };
  let i = 0;
  for (const event of events) {
    if (closed) return hungUp(progress);
    if (i === cutAt) {
      await flush();
      await Promise.race([sent, gone]);
      await new Promise((r) => setTimeout(r, 20));
      res.destroy();
      return false;
    }
    if (i === errorAt) {
      written();
      res.write(buffer + frame(typeof errorEvent === 'function' ? (errorEvent as (sent: number) => unknown)(i) : errorEvent) + (terminator ? `data: ${terminator}\n\n` : ''));
      res.end();
      return false;
    }
    if (i === malformedAt) {
      written();
      res.end(`${buffer}data: {"id":"gen-\n\n`);
      return false;
    }
    buffer += frame(event);
    progress?.count?.(event);
    i++;
    // Small streams go out event by event (a person sees each token); long ones in bigger writes.
    if (buffer.length >= (i < 64 ? 1 : WRITE_BYTES)) await flush();
  }
  await flush();
  if (closed) return hungUp(progress);
  progress?.beforeEnd?.();
  // With the end: it waits for the charge just made to be written (server.ts), and so does [DONE].
  res.end(terminator ? `data: ${terminator}\n\n` : undefined);
  return !closed;
}

/**
 * Writes a streamed answer with backpressure. Under the cut fault, the connection drops once
 * `after` KiB (default `defaultKiB`) have gone out; `cut` says so, and later writes do nothing.
 */
export function cuttableWriter(ctx: Ctx, defaultKiB: number): { cut: boolean; write(data: string | Buffer): Promise<void> } {
  const res = ctx.res;
  const cutAfter = ctx.fault?.kind === 'cut' ? (ctx.fault.after ?? defaultKiB) * 1024 : Infinity;
  let sent = 0;
  const writer = {
    cut: false,
    async write(data: string | Buffer): Promise<void> {
      if (!data.length || writer.cut) return;
      if (sent + data.length > cutAfter) {
        const keep = Math.max(0, cutAfter - sent);
        res.write(typeof data === 'string' ? data.slice(0, keep) : data.subarray(0, keep));
        // Let the bytes before the cut reach the client, then drop the connection.
        setTimeout(() => res.destroy(), 20);
        writer.cut = true;
        return;
      }
      sent += data.length;
      if (!res.write(data)) await drainOrClose(res);
    },
  };
  return writer;
}

export function drainOrClose(res: NodeJS.WritableStream & { once: (event: string, fn: () => void) => unknown; off: (event: string, fn: () => void) => unknown }): Promise<void> {
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
