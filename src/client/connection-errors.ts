import { ConnectionError, ProxyRefusedError, RouterError, TimeoutError, TlsError, type ConnectionErrorCode } from './errors.js';
import { PROXY_TIMEOUT } from './transport.js';
import { isCallerAbort } from './caller-aborts.js';

// Failures below HTTP (refused, unreachable, cut, timed out) as the client's error types.

/** Failures before anything was sent: the system's code, ours, and the words for it. */
const NOT_DELIVERED = new Map<string, [ConnectionErrorCode, string]>([
  ['ECONNREFUSED', ['refused', 'connection refused']],
  ['UND_ERR_CONNECT_TIMEOUT', ['connect_timeout', 'connect timed out']],
  ...['ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].map((c): [string, [ConnectionErrorCode, string]] => [c, ['unreachable', 'host not reachable']]),
]);
function errorCode(err: unknown): string | undefined {
  return (errnoOf(err) as { code?: string } | undefined)?.code;
}

function isAbort(err: unknown): boolean {
  return (err as { name?: string })?.name === 'AbortError' || errorCode(err) === 'ABORT_ERR' || isCallerAbort(err);
}

/** The socket or resolver error under an undici failure (its code, address, port, hostname). */
function errnoOf(err: unknown): { address?: unknown; port?: unknown; hostname?: unknown } | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    if (typeof (e as { code?: unknown }).code === 'string') return e as { address?: unknown; port?: unknown; hostname?: unknown };
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The proxy a failed connection was made to, when it was: its address and port, or the name that did not resolve, are the proxy's. */
function failedProxy(err: unknown, proxy: string | undefined): string | undefined {
  if (!proxy) return undefined;
  const { address, port, hostname } = errnoOf(err) ?? {};
  const p = new URL(proxy);
  const proxyPort = Number(p.port || (p.protocol === 'https:' ? 443 : 80));
  if (typeof hostname === 'string' && hostname.toLowerCase() === p.hostname.replace(/^\[|\]$/g, '').toLowerCase()) return p.host;
  return port === proxyPort && typeof address === 'string' ? p.host : undefined;
}

/**
 * Maps a low-level undici/socket failure onto the client's error types. `proxy`: the proxy the
 * request went through, if any, named when it is what failed.
 */
export function toConnectionError(err: unknown, url: string, proxy?: string): Error {
  // undici reports a proxy that will not open the tunnel as an abort: it is no Ctrl-C.
  const refused = /^Proxy response \((\d+)\)/.exec((err as Error)?.message ?? '');
  if (refused && proxy) {
    const status = Number(refused[1]);
    const hint = status === 407 ? ': it asks for a user name and password (put them in the proxy URL: http://user:password@host:port)' : '';
    return new ProxyRefusedError(`the proxy ${new URL(proxy).host} refused the way to ${new URL(url).host} (HTTP ${status})${hint}`, status, { cause: err });
  }
  if (isAbort(err) || err instanceof RouterError) return err as Error;
  const code = errorCode(err);
  if (code === PROXY_TIMEOUT && proxy) {
    return new TimeoutError(`timed out waiting for the proxy ${new URL(proxy).host} to open the way to ${new URL(url).host}`, { cause: err, maybeDelivered: false, code: 'proxy_timeout' });
  }
  const viaProxy = failedProxy(err, proxy);
  const host = viaProxy ? `the proxy ${viaProxy}, on the way to ${new URL(url).host}` : new URL(url).host;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new TimeoutError(`timed out waiting for ${host}`, { cause: err, maybeDelivered: true });
  }
  const unsent = code === undefined ? undefined : NOT_DELIVERED.get(code);
  if (unsent) return new ConnectionError(`${unsent[1]}: ${host}`, { cause: err, maybeDelivered: false, code: unsent[0] });
  const tls = tlsFailure(err, code, host);
  if (tls) return tls;
  const detail = (err as Error)?.message || code || 'connection failed';
  return new ConnectionError(`connection to ${host} failed: ${detail}`, { cause: err, maybeDelivered: true });
}

/** node's codes of a failed TLS handshake: its ERR_TLS_* and ERR_SSL_*, and OpenSSL's verify errors of a certificate. */
const TLS_CODES = /^(?:ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)|CERT/;

/** A failed TLS handshake, in words (OpenSSL's own text names its source file and line): nothing was sent. */
function tlsFailure(err: unknown, code: string | undefined, host: string): TlsError | undefined {
  if (!code || !TLS_CODES.test(code)) return undefined;
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' || code === 'ERR_SSL_HTTP_REQUEST') {
    return new TlsError(`https to ${host} failed: the server there does not speak TLS (is its URL http://, not https://?); nothing was sent`, { cause: err, code: 'not_tls' });
  }
  const { reason, message } = errnoOf(err) as { reason?: unknown; message?: unknown };
  const said = typeof reason === 'string' ? reason : typeof message === 'string' && !message.includes(':error:') ? message : code;
  if (!/CERT|UNABLE_TO_|SELF_SIGNED/.test(code)) return new TlsError(`the TLS handshake with ${host} failed (${said}); nothing was sent`, { cause: err });
  return new TlsError(`the TLS certificate of ${host} was not accepted (${said}); nothing was sent (a certificate authority of your own: NODE_EXTRA_CA_CERTS=FILE.pem)`, { cause: err, code: 'tls_certificate' });
}

/** A body that fails after its head arrived: cut mid-answer (part may have been used), or timed out. */
export function bodyError(err: unknown, url: string): Error {
  const e = toConnectionError(err, url);
  if (e instanceof ConnectionError && !(e instanceof TimeoutError)) {
    return new ConnectionError(`the stream was cut before it was complete (${e.message})`, { cause: err, maybeDelivered: true, code: 'cut' });
  }
  return e;
}

/** A stream that ended (even with its terminator) before the service said the answer was complete: a cut stream. */
export function unfinished(missing: string): ConnectionError {
  return new ConnectionError(`the stream ended without the service saying the answer was complete (${missing}); the answer may be cut`, { maybeDelivered: true, code: 'cut' });
}
