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
  /** Whether `err` lost the request on a socket of `sockets` that had answered before, and it may go again. */
  staleLoss(sockets: SocketsMade, err: Error): boolean;
  /** The request sent once more, on a connection made for it. */
  sendFresh(origin: string, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void;
}

/**
 * A request's handler that, when its connection is lost before any answer on a socket that had answered
 * before (SocketsMade.reusedAndLost), has it sent once more on a new connection instead of failing it;
 * as is otherwise. Fields, not closures: one per upstream request.
 */
export class OnceMoreIfStale implements Dispatcher.DispatchHandler {
  private answered = false;

  constructor(
    private readonly handler: Dispatcher.DispatchHandler,
    private readonly owner: SendsAgain,
    private readonly sockets: SocketsMade,
    private readonly origin: string,
    private readonly opts: Dispatcher.DispatchOptions,
  ) {}

  onRequestStart(c: Controller, context: object): void {
    this.handler.onRequestStart?.(c, context);
  }

  onResponseStart(c: Controller, status: number, headers: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2], message?: string): void {
    this.answered = true;
    this.handler.onResponseStart?.(c, status, headers, message);
  }

  onResponseData(c: Controller, chunk: Buffer): void {
    this.handler.onResponseData?.(c, chunk);
  }

  onResponseEnd(c: Controller, trailers: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>[1]): void {
    this.handler.onResponseEnd?.(c, trailers);
  }

  onResponseError(c: Controller, err: Error): void {
    if (!this.answered && this.owner.staleLoss(this.sockets, err)) return this.owner.sendFresh(this.origin, this.opts, this.handler);
    this.handler.onResponseError?.(c, err);
  }
}
