import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, answerJson, errorBody, requestId, type BodySource } from './http.js';

/** The largest JSON body a route reads whole (batches stream theirs to disk). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Bodies in memory at once, across all connections, by default: three of the largest. */
export const BODIES_IN_FLIGHT_BYTES = 96 * 1024 * 1024;
/** A body that sends nothing for this long is answered 408 and its connection closed. */
export const BODY_IDLE_MS = 30_000;
/** Bodies up to this size may use the last SMALL_RESERVE of the budget, which larger ones leave free. */
const SMALL_BODY = 1024 * 1024;
const SMALL_RESERVE = 8 * 1024 * 1024;

/**
 * The bytes of request bodies held in memory, across connections: a body is counted from its first
 * byte (or its Content-Length) until its answer is done, so one that stalls keeps its share.
 */
export class BodyBudget {
  held = 0;
  constructor(readonly limit = BODIES_IN_FLIGHT_BYTES) {}

  /** Takes `more` bytes for a body that will then hold `total`; false when that would pass the limit. */
  take(more: number, total: number): boolean {
    const cap = total <= SMALL_BODY ? this.limit : this.limit - Math.min(SMALL_RESERVE, this.limit / 2);
    if (this.held + more > cap) return false;
    this.held += more;
    return true;
  }

  /** The most one large body may ever hold, with no other body in flight. */
  get largest(): number {
    return this.limit - Math.min(SMALL_RESERVE, this.limit / 2);
  }

  give(bytes: number): void {
    this.held -= bytes;
  }
}

const busy = () => new HttpError(503, 'The emulator holds as many request bodies as it takes at once; retry shortly', undefined, { 'retry-after': '1' });

/** One request's body: read whole, or held in part by a route that streams it (the batch upload). */
export class RequestBody implements BodySource {
  private reserved = 0;
  private watching = false;
  private answered = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly budget: BodyBudget,
  ) {}

  /** Counts `total` bytes of this body as held until its answer is done; a 503 past the budget. */
  hold(total: number): void {
    if (this.answered || total === this.reserved) return;
    if (!this.watching) {
      this.watching = true;
      // Given back once the answer is done (or the connection gone): the parsed body lives until then.
      this.res.once('close', () => {
        this.answered = true;
        this.budget.give(this.reserved);
        this.reserved = 0;
      });
    }
    if (total < this.reserved) this.budget.give(this.reserved - total);
    else if (!this.budget.take(total - this.reserved, total)) throw busy();
    this.reserved = total;
  }

  /** Whether `total` bytes of one body could ever be held (else no retry can help: a 413, not a 503). */
  couldHold(total: number): boolean {
    return total <= SMALL_BODY || total <= this.budget.largest;
  }

  /** The whole body, within `limit` bytes and the server's budget of bodies in flight. */
  receive(limit = MAX_BODY_BYTES): Promise<Buffer> {
    const req = this.req;
    return new Promise<Buffer>((resolve, reject) => {
      const declared = Number(req.headers['content-length'] ?? 0) || 0;
      if (declared > limit) return reject(new HttpError(413, `request body larger than ${limit} bytes`));
      try {
        this.hold(declared);
      } catch (err) {
        return reject(err);
      }
      // A declared length is one buffer, filled as the bytes come: no chunks held beside a copy of them.
      const whole = declared ? Buffer.allocUnsafe(declared) : undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      const stop = (err: unknown) => {
        req.off('data', onData).off('end', onEnd).off('error', stop);
        chunks.length = 0;
        reject(err);
      };
      // Events, not `for await`: an async iterator per request cost the emulator ~4% of its time under load.
      const onData = (chunk: Buffer) => {
        if (size + chunk.length > limit) return stop(new HttpError(413, `request body larger than ${limit} bytes`));
        try {
          if (size + chunk.length > declared) this.hold(size + chunk.length);
        } catch (err) {
          return stop(err);
        }
        // The parser never passes more than the Content-Length.
        if (whole) chunk.copy(whole, size);
        else chunks.push(chunk);
        size += chunk.length;
      };
      const onEnd = () => {
        req.off('error', stop);
        if (whole) resolve(whole.subarray(0, size));
        else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      };
      req.on('data', onData).once('end', onEnd).once('error', stop);
      // A request that ended without a body never emits 'end' again.
      if (req.readableEnded) onEnd();
    });
  }
}

/**
 * A body is read as sent: one with a Content-Encoding (gzip, br, ...) is refused with 415 naming it,
 * as the service documents no compressed request bodies (RFC 7694: the answer's Accept-Encoding says
 * what is taken), rather than parsed as JSON that it is not.
 */
export function refuseEncodedBody(req: IncomingMessage): void {
  const header = req.headers['content-encoding'];
  if (header === undefined) return;
  const codings = header.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c && c !== 'identity');
  if (codings.length) throw new HttpError(415, `request bodies with Content-Encoding ${codings.join(', ')} are not accepted; send the body uncompressed`, 'invalid_request', { 'accept-encoding': 'identity' });
}

/**
 * Closes a connection whose request body stops arriving for `idleMs` (408 when nothing was answered
 * yet), whoever reads the body: a route, the batch upload, or the discarding of a refused one.
 */
export function timeOutStalledBody(req: IncomingMessage, res: ServerResponse, idleMs: number): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (!hasBody || req.complete) return;
  const socket = req.socket;
  let lastRead = socket.bytesRead;
  let lastProgress = Date.now();
  const every = Math.max(10, idleMs / 4);
  const progressed = () => {
    // Bytes waiting in the request's buffer: the server is the slow one, not the client.
    if (socket.bytesRead === lastRead && req.readableLength === 0) return false;
    lastRead = socket.bytesRead;
    lastProgress = Date.now();
    return true;
  };
  const check = () => {
    if (req.complete || socket.destroyed) return;
    if (!progressed() && Date.now() - lastProgress >= idleMs) {
      // Timers run before the loop reads sockets: after a pause of the whole process (a busy
      // machine), bytes the client sent in time may be unread yet. Read them first, then decide.
      return void setImmediate(() => {
        if (req.complete || socket.destroyed) return;
        if (!progressed()) return stalled();
        timer = setTimeout(check, every).unref();
      });
    }
    timer = setTimeout(check, every).unref();
  };
  let timer = setTimeout(check, every).unref();
  // Read to its end (or gone): nothing to watch, and nothing of it kept alive by a timer.
  req.once('close', () => clearTimeout(timer));
  const stalled = () => {
    if (res.headersSent) return socket.destroy();
    res.once('finish', () => socket.destroy());
    const text = JSON.stringify(errorBody(408, `no request body arrived for ${idleMs / 1000} s`, 'timeout'));
    answerJson(res, 408, text, requestId(), { connection: 'close' });
  };
}
