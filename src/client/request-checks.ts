import { ValidationError } from './errors.js';
import { urlShown } from '../internal/userinfo.js';
import { shownGiven } from '../internal/shape.js';

/** A segment that a URL (or a server that decodes it first) reads as "this folder" or "the one above". */
function isDotSegment(segment: string): boolean {
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    /* a malformed escape is the server's to refuse; it is no dot segment */
  }
  return decoded === '.' || decoded === '..' || /[/\\]/.test(decoded) && decoded.split(/[/\\]/).some((s) => s === '.' || s === '..');
}

/**
 * A path relative to the API root stays under it: a `.` or `..` segment, written plainly, escaped
 * (`%2e%2e`) or behind a backslash, would take the request (and its key) elsewhere on the host.
 */
export function checkRelativePath(path: string): void {
  const pathOnly = path.split(/[?#]/, 1)[0]!;
  if (pathOnly.split(/[/\\]/).some(isDotSegment)) {
    throw new ValidationError(`the path ${JSON.stringify(path)} has a "." or ".." segment, which would leave the API root: nothing was sent`);
  }
}

/** The resolved URL is still under `{api_root}{prefix}/` (a last guard after URL normalization). */
export function checkUnderRoot(url: URL, rootPath: string): void {
  const root = rootPath.endsWith('/') ? rootPath : `${rootPath}/`;
  if (!`${url.pathname}/`.startsWith(root)) {
    throw new ValidationError(`the path ${url.pathname} is outside the API root ${root}: nothing was sent`);
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What HTTP lets a header value hold: no line break (it would start another header), no other control character. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A key HTTP can carry: else a ValidationError when the client is made, not at each call (its value never said). */
export function checkApiKey(apiKey: unknown): void {
  if (typeof apiKey === 'string' && !FIELD_VALUE.test(apiKey)) {
    throw new ValidationError('apiKey holds a line break or another character HTTP headers cannot carry (a key read from a file keeps its last newline: trim() it)');
  }
}

/** Header names and values that HTTP can carry as given, else a ValidationError naming the header (its value never). */
export function checkHeaders(headers: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new ValidationError(`header name ${JSON.stringify(name)} is not a valid HTTP header name: nothing was sent`);
    if (value !== undefined && !FIELD_VALUE.test(value)) {
      throw new ValidationError(`the value of header ${name} holds a line break or another character HTTP headers cannot carry: nothing was sent`);
    }
  }
}

/**
 * The API root as requests are made from it: an absolute http(s) URL without a trailing slash, and
 * without the `/v1` of the base URL the service's docs write. Anything else is refused here, when the
 * client is made, rather than later as a connection error a program would take for the network's.
 */
export function checkedApiRoot(value: string, example: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const shown = JSON.stringify(urlShown(String(value)));
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ValidationError(`apiRoot must be an http(s) URL such as ${example}, got ${shown}`);
  const root = value.replace(/\/+$/, '');
  if (/[?#]/.test(root)) throw new ValidationError(`the API root ${urlShown(root)} holds a query or a fragment: give the URL before /v1`);
  return root.replace(/\/v1$/, '');
}

/** A call's own headers and timeout, checked as the client's are: a bad timeout would be undici's "invalid headersTimeout", said as a failed connection. */
export function checkCallParts(o: { headers?: Record<string, string | undefined> | undefined; timeoutMs?: unknown }): void {
  if (o.headers) checkHeaders(o.headers);
  if (o.timeoutMs !== undefined) checkClientNumbers({ timeoutMs: o.timeoutMs });
}

/** A client's numbers: a timeout over 0 ms, a whole number of retries. */
export function checkClientNumbers(o: { timeoutMs?: unknown; maxRetries?: unknown }): void {
  const { timeoutMs, maxRetries } = o;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new ValidationError(`timeoutMs must be a number of milliseconds over 0, not ${shownGiven(timeoutMs)}`);
  if (maxRetries !== undefined && !(typeof maxRetries === 'number' && Number.isInteger(maxRetries) && maxRetries >= 0)) throw new ValidationError(`maxRetries must be a whole number of at least 0, not ${shownGiven(maxRetries)}`);
}
