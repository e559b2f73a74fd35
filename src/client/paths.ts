import { ValidationError } from './errors.js';

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
