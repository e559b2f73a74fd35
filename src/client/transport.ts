import type { Dispatcher } from 'undici';
import { Agent, EnvHttpProxyAgent, Pool } from './undici.js';
import { AnswerBody } from './answer-body.js';
import { whenAborted } from '../internal/abort-fanout.js';
import { noteCallerAbort } from './caller-aborts.js';

// undici's dispatchers from ./undici.js, not undici's entry point (which sets the process's global
// dispatcher); requests through their public dispatch().

export type AgentOptions = ConstructorParameters<typeof Agent>[0];

export interface ProxyOptions {
  /** For http:// API roots. */
  httpProxy?: string | undefined;
  /** For https:// API roots. */
  httpsProxy?: string | undefined;
  /** Hosts (and host:port) reached directly, comma-separated, as NO_PROXY. */
  noProxy?: string | undefined;
}

/** The code of the error a proxy that does not answer a tunnel's CONNECT in time fails with. */
export const PROXY_TIMEOUT = 'ROUTER_PROXY_TIMEOUT';

type ConnectFn = (params: Record<string, unknown>) => Promise<unknown>;

/**
 * The client to the proxy itself. undici gives a tunnel's CONNECT no timeout of its own but the
 * default five minutes, and a request waiting for its tunnel cannot be aborted: the CONNECT gets
 * `timeoutMs`, and failing it says it is the proxy that stalled.
 */
function proxyClientFactory(timeoutMs: number) {
  return (origin: URL, opts: object): Dispatcher => {
    const pool = new Pool(origin, { ...opts, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const connect = (pool as unknown as { connect: ConnectFn }).connect.bind(pool);
    (pool as unknown as { connect: ConnectFn }).connect = (params) =>
      connect(params).catch((err: { code?: string }) => {
        if (err?.code !== 'UND_ERR_HEADERS_TIMEOUT') throw err;
        throw Object.assign(new Error(`no answer to CONNECT within ${timeoutMs} ms`), { code: PROXY_TIMEOUT, cause: err });
      });
    return pool;
  };
}

/**
 * undici's Agent; one that goes through a proxy for the origins `proxy` says, when it names one.
 * `timeoutMs` bounds the proxy's answer to a tunnel's CONNECT.
 */
export function createAgent(opts: AgentOptions, proxy?: ProxyOptions, timeoutMs = 120_000): Dispatcher {
  if (proxy?.httpProxy || proxy?.httpsProxy) {
    // '' rather than undefined: undici would read the process's environment for a missing one.
    // proxyTls' timeout is the TCP (and TLS) connect to the proxy itself; requestTls is left alone (its servername would win over the host's).
    const options = { ...opts, clientFactory: proxyClientFactory(timeoutMs), proxyTls: { timeout: Math.min(10_000, timeoutMs) }, httpProxy: proxy.httpProxy ?? '', httpsProxy: proxy.httpsProxy ?? '', noProxy: proxy.noProxy ?? '' };
    return new EnvHttpProxyAgent(options as ConstructorParameters<typeof EnvHttpProxyAgent>[0]);
  }
  return new Agent(opts);
}

/** An answer's status and head, its body still to be read. */
export interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: AnswerBody;
}

export type SendOptions = Pick<Dispatcher.DispatchOptions, 'method' | 'headers' | 'body' | 'headersTimeout' | 'bodyTimeout'> & { signal?: AbortSignal };

type Controller = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[0];

/**
 * One request, through undici's raw handler: the body's chunks go straight to an AnswerBody, with
 * no stream in between (request()'s body stream cost a stream's bookkeeping per network read).
 * It fails as soon as `opts.signal` is aborted, whatever phase it is in: undici aborts a request
 * only once it has a connection, and one waiting for its connection (a proxy that never answers)
 * would wait on.
 */
export function send(dispatcher: Dispatcher, url: string, opts: SendOptions): Promise<Answer> {
  const { signal, ...rest } = opts;
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let controller: Controller | undefined;
    let answer: Answer | undefined;
    let stop = () => {};
    const onAbort = () => {
      noteCallerAbort(signal!.reason);
      reject(signal!.reason);
      // Abandoned: its late failure is nobody's, and a late answer's body is let go.
      if (answer) answer.body.destroy(signal!.reason as Error);
      else controller?.abort(signal!.reason as Error);
    };
    if (signal?.aborted) return onAbort();
    // One listener on a signal the caller gives many requests at once (node warns at eleven).
    if (signal) stop = whenAborted(signal, onAbort);
    dispatcher.dispatch(
      { ...rest, origin: u.origin, path: u.pathname + u.search },
      {
        onRequestStart(c) {
          controller = c;
          // Aborted while it waited for its connection: it is not sent.
          if (signal?.aborted) c.abort(signal.reason as Error);
        },
        onResponseStart(c, statusCode, headers) {
          // 1xx answers (100 Continue) come before the one that counts.
          if (statusCode < 200) return;
          if (signal?.aborted) return c.abort(signal.reason as Error);
          answer = { statusCode, headers: headers as Answer['headers'], body: new AnswerBody(c) };
          resolve(answer);
        },
        onResponseData(_, chunk) {
          answer!.body.push(chunk);
        },
        onResponseEnd() {
          stop();
          answer!.body.end();
        },
        onResponseError(_, err) {
          stop();
          if (answer) answer.body.fail(err);
          else reject(err);
        },
      },
    );
  });
}

/**
 * Closes `dispatcher` at once when no request is queued or under way on it (undici's stats say so):
 * its close() would destroy each connection with an error of undici's whose stack node formats as it
 * destroys the socket, which reads every line end of the file undici runs from (the CLI's bundle:
 * ~6 M instructions of a one-shot chat's ~229 M). Here the error's stack is set, so nothing is read.
 * false (nothing done): a request is in flight, or a dispatcher without stats (a proxy agent).
 */
export function closeIdle(dispatcher: Dispatcher): Promise<void> | false {
  const stats = (dispatcher as { stats?: Record<string, { size?: number }> }).stats;
  if (!(dispatcher instanceof Agent) || !stats || !Object.values(stats).every((s) => s.size === 0)) return false;
  const err = Object.assign(new Error('The client is destroyed'), { name: 'ClientDestroyedError', code: 'UND_ERR_DESTROYED' });
  err.stack = `${err.name}: ${err.message}`;
  return dispatcher.destroy(err).then(
    () => {},
    () => {},
  );
}
