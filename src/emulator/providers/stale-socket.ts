import type { Socket } from 'node:net';
import { buildConnector, type Dispatcher } from 'undici';

type Controller = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[0];

/** What a socket had read when it was made (a TLS handshake's bytes), by its local port. */
interface Made {
  bytesRead: number;
}

/** A connection error's own marker, set where undici gets the socket's error: whether the socket had answered before it. */
const REUSED = Symbol('reused');

/**
 * Sockets of one origin as they are made, so that a connection error can tell whether its socket had
 * carried an answer before (a reused, idle connection) or was made for the request that failed.
 */
export class SocketsMade {
  private readonly made = new Map<number, Made>();

  /** undici's connector for `timeout`, each socket it makes remembered until it closes. */
  connector(timeout: number | undefined): buildConnector.connector {
    const connect = buildConnector({ timeout });
    return (opts, callback) =>
      connect(opts, (...args) => {
        if (args[1]) this.remember(args[1]);
        callback(...args);
      });
  }

  private remember(socket: Socket): void {
    const port = socket.localPort;
    const made: Made = { bytesRead: socket.bytesRead };
    if (port !== undefined) this.made.set(port, made);
    // Before undici's own listeners: its error is this object, told here whether the socket had read an answer.
    socket.on('error', (err: Error & { [REUSED]?: boolean }) => (err[REUSED] ??= socket.bytesRead > made.bytesRead));
    // After the request on it has heard why (undici's close listener comes after this one).
    socket.once('close', () => setImmediate(() => port !== undefined && this.made.get(port) === made && this.made.delete(port)));
  }

  /**
   * Whether `err` is a connection lost on a socket that had answered a request before: closed ("other
   * side closed") or reset as the request went out. The request that failed got no byte back (the caller
   * knows). A server closing an idle connection has not read what crossed its close: the request can go
   * again, once, on a new connection (as Chromium resends any request, a POST too, lost so).
   */
  reusedAndLost(err: unknown): boolean {
    const e = err as { code?: string; socket?: { localPort?: number; bytesRead?: number }; [REUSED]?: boolean } | null;
    if (!e) return false;
    if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return e[REUSED] === true;
    if (e.code !== 'UND_ERR_SOCKET' || e.socket?.localPort === undefined) return false;
    const made = this.made.get(e.socket.localPort);
    return !!made && (e.socket.bytesRead ?? 0) > made.bytesRead;
  }
}

/** Where a request lost on a stale socket goes again (OriginPools). */
export interface SendsAgain {
  /** Wrappers (OnceMoreIfStale) whose request ended, for the next. */
  readonly spare: OnceMoreIfStale[];
  /** Whether `err` lost the request on a socket of `sockets` that had answered before, and it may go again. */
  staleLoss(sockets: SocketsMade, err: Error): boolean;
  /** The request sent once more, on a connection made for it. */
  sendFresh(origin: string, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void;
}

/** Wrappers kept for the next requests, at most (a burst's more are made and let go). */
const SPARE = 256;

/**
 * A request's handler that, when its connection is lost before any answer on a socket that had answered
 * before (SocketsMade.reusedAndLost), has it sent once more on a new connection instead of failing it;
 * as is otherwise. Fields, not closures; and reused (`spare`, its OriginPools'): once its request ended
 * it takes the next, where one made a request was ~100 B on the young generation. A call for a request
 * it no longer carries (another controller than its own) is dropped.
 */
export class OnceMoreIfStale implements Dispatcher.DispatchHandler {
  private answered = false;
  private controller: Controller | undefined;
  private handler: Dispatcher.DispatchHandler | undefined;
  private owner: SendsAgain | undefined;
  private sockets: SocketsMade | undefined;
  private origin = '';
  private opts: Dispatcher.DispatchOptions | undefined;

  /** A wrapper of `handler`: a spare one, else one made. */
  static of(spare: OnceMoreIfStale[], handler: Dispatcher.DispatchHandler, owner: SendsAgain, sockets: SocketsMade, origin: string, opts: Dispatcher.DispatchOptions): OnceMoreIfStale {
    const w = spare.pop() ?? new OnceMoreIfStale();
    w.handler = handler;
    w.owner = owner;
    w.sockets = sockets;
    w.origin = origin;
    w.opts = opts;
    return w;
  }

  /** Its request over: the handler it carried given back, the wrapper kept for another (when `spare` has room). */
  private ended(spare: OnceMoreIfStale[]): Dispatcher.DispatchHandler {
    const handler = this.handler!;
    this.handler = this.owner = this.sockets = this.opts = this.controller = undefined;
    this.answered = false;
    if (spare.length < SPARE) spare.push(this);
    return handler;
  }

  /** Whether `c` is its request's controller: before it started, none (undici's error before a connection); any other is a request's before. */
  private mine(c: Controller | null): boolean {
    return !!this.handler && (this.controller === undefined ? c == null : c === this.controller);
  }

  onRequestStart(c: Controller, context: object): void {
    if (!this.handler) return;
    this.controller = c;
    this.handler.onRequestStart?.(c, context);
  }

  onResponseStart(c: Controller, status: number, headers: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2], message?: string): void {
    if (!this.mine(c)) return;
    this.answered = true;
    this.handler!.onResponseStart?.(c, status, headers, message);
  }

  onResponseData(c: Controller, chunk: Buffer): void {
    if (this.mine(c)) this.handler!.onResponseData?.(c, chunk);
  }

  onResponseEnd(c: Controller, trailers: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>[1]): void {
    if (!this.mine(c)) return;
    this.handler!.onResponseEnd?.(c, trailers);
    if (this.handler) this.ended(this.owner!.spare);
  }

  onResponseError(c: Controller, err: Error): void {
    if (!this.mine(c)) return;
    const { owner, sockets, origin, opts, answered } = this;
    const handler = this.ended(owner!.spare);
    if (!answered && owner!.staleLoss(sockets!, err)) return owner!.sendFresh(origin, opts!, handler);
    handler.onResponseError?.(c, err);
  }
}
