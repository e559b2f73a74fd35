import type { Dispatcher } from 'undici';
import { closeIdle, createAgent, send, type ProxyOptions } from './transport.js';
import { afterReason, APIError, apiErrorOf, ConnectionError, foreignSaid, isErrorEnvelope, malformedJson, ProxyRefusedError, TlsError, ValidationError, type RouterError } from './errors.js';
import { toConnectionError } from './connection-errors.js';
import { sleep } from '../internal/sleep.js';
import { KEEP_ALIVE } from '../internal/keep-alive.js';
import { withoutUserinfo } from '../internal/userinfo.js';
import type { AnswerBody } from './answer-body.js';
import { redirected, unexpectedContent } from './content-type.js';
import { checkApiKey, checkCallParts, checkClientNumbers, checkedApiRoot, checkHeaders, checkRelativePath, checkUnderRoot } from './request-checks.js';
import { backoffDelay, MAX_RETRY_AFTER_MS, parseRetryAfter, retriesAnswer } from './retry.js';

export { backoffDelay, MAX_RETRY_AFTER_MS, parseRetryAfter };

export const DEFAULT_API_ROOT = 'https://openrouter.ai/api';
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_RETRIES = 2;
import { VERSION } from './version.js';
import { authorizationOf, callCredentials, noteCredentials, plainHttpOnce, type PlainHttpOption } from './credentials.js';
import { jsonBody } from '../internal/json-pieces.js';

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface ClientOptions extends PlainHttpOption {
  apiKey?: string | undefined;
  /** Calls go without a key on purpose (a probe of whether an API answers at a root): not refused for want of one. */
  keyless?: boolean | undefined;
  /** Root of the HTTP API; `{api_root}/v1` and `{api_root}/alpha` are derived from it. */
  apiRoot?: string | undefined;
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  userAgent?: string | undefined;
  headers?: Record<string, string> | undefined;
  onRetry?: ((info: RetryInfo) => void) | undefined;
  dispatcher?: Dispatcher | undefined;
  /** Proxies to go through (as HTTP_PROXY, HTTPS_PROXY and NO_PROXY say); the client reads no environment itself. */
  proxy?: ProxyOptions | undefined;
}

export type { ProxyOptions };

export type Base = 'v1' | 'alpha' | 'root';

/**
 * always: retry every transient failure (idempotent calls, and POSTs that create nothing lasting).
 * unaccepted: retry only when the server cannot have acted on the request (refused connection, 429, 503).
 * paid: a call the service charges for (chat, responses, embeddings, speech, decisions): retried on
 * an error answer (it is not charged), never once it may have been carried out with its answer lost
 * (a connection cut or a timeout after the request went out): a retry would be charged again.
 * never: a single attempt.
 */
export type RetryPolicy = 'always' | 'unaccepted' | 'paid' | 'never';

export type Query = Record<string, string | number | boolean | string[] | undefined>;

export interface RequestOptions {
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT';
  path: string;
  /** A whole URL to call instead of path, base and query (a next page's link). */
  url?: string | undefined;
  base?: Base | undefined;
  query?: Query | undefined;
  /** JSON body. */
  body?: unknown;
  /** A body produced afresh for each attempt (for streamed uploads). */
  bodyFactory?: (() => AsyncIterable<Uint8Array | string, unknown, undefined> | Uint8Array | string) | undefined;
  contentType?: string | undefined;
  headers?: Record<string, string | undefined> | undefined;
  signal?: AbortSignal | undefined;
  retry?: RetryPolicy | undefined;
  timeoutMs?: number | undefined;
  accept?: string | undefined;
  /** Resolve with any answer (after the retries of transient ones), not only a 2xx. */
  anyStatus?: boolean | undefined;
  /** json(): called with the answer's headers once they arrive, before its body is read. */
  onHead?: ((headers: RawResponse['headers']) => void) | undefined;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Iterable, text() or dump(); next() and rest() read it a network read at a time. */
  body: AnswerBody;
  requestId: string | undefined;
  /** The longest wait of this attempt (the call's --timeout): an event stream waits this long for each event. */
  timeoutMs?: number | undefined;
}

/** Whether headers carry credentials of their own (an `authorization` header a program set). */
const hasAuthorization = (headers: Record<string, string | undefined> | undefined) => !!authorizationOf(headers);

export class HttpCore {
  readonly apiRoot: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  // Held in private fields (#): a program that logs its client (console.log, util.inspect, a logger's JSON) never prints a credential.
  readonly #apiKey: string | undefined;
  private readonly keyless: boolean;
  private readonly userAgent: string;
  readonly #extraHeaders: Record<string, string>;
  private readonly onRetry: ((info: RetryInfo) => void) | undefined;
  readonly #plainHttp: (url: string, credentialed: boolean) => void;
  readonly #dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  readonly #proxy: ProxyOptions | undefined;

  constructor(opts: ClientOptions = {}) {
    this.#apiKey = opts.apiKey;
    this.keyless = opts.keyless === true;
    this.apiRoot = checkedApiRoot(opts.apiRoot ?? DEFAULT_API_ROOT, DEFAULT_API_ROOT);
    checkClientNumbers(opts);
    checkApiKey(opts.apiKey);
    checkHeaders({ ...opts.headers, authorization: opts.apiKey === undefined ? undefined : `Bearer ${opts.apiKey}`, 'user-agent': opts.userAgent });
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.userAgent = opts.userAgent ?? `router-cli/${VERSION} node/${process.versions.node}`;
    this.#extraHeaders = opts.headers ?? {};
    noteCredentials(this, opts.apiKey, this.#extraHeaders);
    this.onRetry = opts.onRetry;
    this.#plainHttp = plainHttpOnce(opts.onPlainHttp);
    this.ownsDispatcher = !opts.dispatcher;
    // As curl does: an https:// root goes through the HTTPS proxy only (undici would fall back on the HTTP one).
    const proxy = opts.proxy && (this.apiRoot.startsWith('https:') ? { ...opts.proxy, httpProxy: undefined } : { ...opts.proxy, httpsProxy: undefined });
    this.#proxy = opts.dispatcher ? undefined : proxy;
    this.#dispatcher = opts.dispatcher ?? createAgent({ ...KEEP_ALIVE, connect: { timeout: Math.min(10_000, this.timeoutMs) } }, proxy, this.timeoutMs);
  }

  /** The proxy a request to `url` is sent through, as far as its scheme says (NO_PROXY aside). */
  private proxyFor(url: string): string | undefined {
    return url.startsWith('https:') ? this.#proxy?.httpsProxy : this.#proxy?.httpProxy;
  }

  url(path: string, base: Base = 'v1', query?: Query): string {
    const prefix = base === 'root' ? '' : `/${base}`;
    checkRelativePath(path);
    const u = new URL(`${this.apiRoot}${prefix}${path}`);
    checkUnderRoot(u, `${new URL(this.apiRoot).pathname.replace(/\/+$/, '')}${prefix}`);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) u.searchParams.append(k, String(item));
    }
    return u.toString();
  }

  /** Sends a request, retrying per policy; resolves only for a 2xx answer. */
  async send(opts: RequestOptions, whole = false): Promise<RawResponse & { text?: string | undefined }> {
    if (this.closing && this.ownsDispatcher) throw new ConnectionError('this client is closed (its close() was called): nothing sent; make a new one to send more', { code: 'closed' });
    const url = opts.url ?? this.url(opts.path, opts.base, opts.query);
    checkCallParts(opts);
    // Every endpoint of the service needs a key: without one the call is refused here, not sent for a 401.
    if (!this.#apiKey && !this.keyless && !hasAuthorization(this.#extraHeaders) && !hasAuthorization(opts.headers)) throw new ValidationError('no API key was given: pass apiKey to new RouterClient({ apiKey }) (every call to the service needs one): nothing was sent');
    this.#plainHttp(url, !!this.#apiKey || hasAuthorization(this.#extraHeaders) || hasAuthorization(opts.headers));
    const policy = opts.retry ?? 'always';
    const maxRetries = policy === 'never' ? 0 : this.maxRetries;
    for (let attempt = 0; ; attempt++) {
      let failure: Error;
      let retryable: boolean;
      let retryAfterMs: number | undefined;
      try {
        const res = await this.attempt(url, opts);
        if (res.status >= 200 && res.status < 300) {
          const wrong = opts.anyStatus ? undefined : unexpectedContent(res.headers['content-type'], opts.accept ?? 'application/json', url, this.apiRoot);
          // A whole answer cut or stalled mid-body fails this attempt, as one with no head does: a GET is sent again.
          if (!wrong && whole) opts.onHead?.(res.headers);
          if (!wrong) return whole ? Object.assign(res, { text: await res.body.text() }) : res;
          await res.body.dump().catch(() => {});
          throw wrong;
        }
        if (opts.anyStatus && (attempt >= maxRetries || !retriesAnswer(res.status, res.headers, policy))) return res;
        if (res.status >= 300 && res.status < 400) {
          await res.body.dump().catch(() => {});
          throw redirected(res.status, res.headers.location, url, this.apiRoot);
        }
        failure = await this.readError(res, url, opts.method, opts.headers);
        retryAfterMs = (failure as APIError).retryAfterMs;
        retryable = retriesAnswer(res.status, res.headers, policy);
      } catch (err) {
        failure = toConnectionError(err, url, this.proxyFor(url));
        if (!(failure instanceof ConnectionError)) throw failure;
        // A proxy's own refusal (it wants credentials, or forbids the host) stays one on a retry.
        retryable = (policy === 'always' || !failure.maybeDelivered) && !(failure instanceof ProxyRefusedError && failure.status < 500) && !(failure instanceof TlsError);
        if (policy === 'paid' && failure.maybeDelivered && attempt < maxRetries && !opts.signal?.aborted) failure.message += ' (not retried: the service may have carried it out, and a retry would be charged again)';
      }
      if (!retryable || attempt >= maxRetries) {
        if (retryable && attempt > 0) (failure as RouterError).retries = attempt;
        throw failure;
      }
      const waitCap = Math.min(MAX_RETRY_AFTER_MS, this.timeoutMs);
      if (retryAfterMs !== undefined && retryAfterMs > waitCap) {
        const cap = waitCap < MAX_RETRY_AFTER_MS ? `the request timeout, ${Number((waitCap / 1000).toFixed(3))}s` : `${waitCap / 1000}s`;
        failure.message += ` (the service asked to wait ${Math.ceil(retryAfterMs / 1000)}s before retrying: longer than ${cap}, so no retry)`;
        throw failure;
      }
      const delayMs = backoffDelay(attempt, retryAfterMs);
      this.onRetry?.({ attempt: attempt + 1, delayMs, reason: failure instanceof APIError ? failure.said : failure.message });
      await sleep(delayMs, opts.signal);
    }
  }

  /** Sends a JSON request and parses the JSON answer. */
  async json<T>(opts: RequestOptions): Promise<{ data: T; requestId: string | undefined; headers: RawResponse['headers'] }> {
    const { text = '', ...res } = await this.send(opts, true);
    try {
      return { data: JSON.parse(text) as T, requestId: res.requestId, headers: res.headers };
    } catch {
      throw malformedJson(this, text);
    }
  }

  /**
   * Closes the connections: gracefully, but a request still under way (a server that stalls) is
   * given a moment and then cut, so that closing never waits on a body nobody reads.
   */
  close(graceMs = 500): Promise<void> {
    // A second close (a finally after a close) is the first one, not undici's "destroyed".
    this.closing ??= this.closeOwn(graceMs);
    return this.closing;
  }
  private closing: Promise<void> | undefined;

  private async closeOwn(graceMs: number): Promise<void> {
    if (!this.ownsDispatcher) return;
    const idle = closeIdle(this.#dispatcher);
    if (idle) return void (await idle);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const closed = await Promise.race([this.#dispatcher.close().then(() => 'closed' as const), late]);
    clearTimeout(timer);
    if (closed === 'late') await this.#dispatcher.destroy().catch(() => {});
  }

  private async attempt(url: string, opts: RequestOptions): Promise<RawResponse> {
    const headers: Record<string, string> = {
      'user-agent': this.userAgent,
      accept: opts.accept ?? 'application/json',
      ...this.#extraHeaders,
    };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    let body: Dispatcher.DispatchOptions['body'] = undefined;
    if (opts.bodyFactory) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      body = opts.bodyFactory() as Dispatcher.DispatchOptions['body'];
    } else if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      // As bytes (a string body is made bytes again as it is written), or pieces made while sent (see jsonBody).
      const json = jsonBody(opts.body);
      if (json.length !== undefined) headers['content-length'] = String(json.length);
      body = json.bytes as unknown as Dispatcher.DispatchOptions['body'];
    }
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = v;
    const timeout = opts.timeoutMs ?? this.timeoutMs;
    const res = await send(this.#dispatcher, url, {
      method: opts.method,
      headers,
      body,
      signal: opts.signal,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const rid = res.headers['x-request-id'];
    return {
      status: res.statusCode,
      headers: res.headers,
      body: res.body,
      requestId: Array.isArray(rid) ? rid[0] : rid,
      timeoutMs: timeout,
    };
  }

  private async readError(res: RawResponse, url: string, method: string, headers: RequestOptions['headers']): Promise<APIError> {
    const request = { method, url: withoutUserinfo(url) };
    const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
    let text = '';
    try {
      text = await res.body.text();
    } catch {
      /* the status alone still tells what happened */
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const secrets = callCredentials(this, headers);
    if (isErrorEnvelope(parsed)) return APIError.fromBody(res.status, parsed, res.requestId, retryAfterMs, request, secrets);
    // Not the service's error: a 404 then most likely means an API root that is not one.
    const said = afterReason(res.status, foreignSaid(this, text, parsed));
    // A web page (another server's 405, a gateway's 502) says nothing a user can act on but where it came from.
    const page = res.status !== 404 && parsed === undefined && /^\s*</.test(text);
    const message =
      res.status === 404 || page ? `${page ? 'a web page, ' : ''}not an API answer${said && parsed !== undefined ? ` (${said})` : ''}: is ${withoutUserinfo(this.apiRoot)} the API root (the URL before /v1)?` : said || `HTTP ${res.status}`;
    return apiErrorOf(res.status, message, { requestId: res.requestId, retryAfterMs, body: parsed, request, secrets });
  }
}
