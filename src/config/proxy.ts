import { fromEnv, httpUrl, SettingsError } from './settings.js';
import { urlShown } from '../internal/userinfo.js';

/** What the client's `proxy` option takes. */
export interface Proxies {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

/** This machine: never through a proxy (as Go's and gh's ProxyFromEnvironment do), whatever NO_PROXY says. */
const LOOPBACK = ['localhost', '127.0.0.1', '::1', '[::1]'];

export function isLoopback(hostname: string): boolean {
  return LOOPBACK.includes(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** The first of the names that is set (as fromEnv reads it), with the name it came from. */
function firstSet(env: NodeJS.ProcessEnv, ...names: string[]): [string, string] | undefined {
  for (const name of names) {
    const value = fromEnv(env, name);
    if (value !== undefined) return [value, name];
  }
  return undefined;
}

/** The variable that names the proxy for a root of this scheme, and its value: https_proxy or HTTPS_PROXY, http_proxy or HTTP_PROXY. */
export function proxyVariable(env: NodeJS.ProcessEnv, root: URL): [string, string] | undefined {
  return root.protocol === 'https:' ? firstSet(env, 'https_proxy', 'HTTPS_PROXY') : firstSet(env, 'http_proxy', 'HTTP_PROXY');
}

/**
 * The proxy the environment names for `apiRoot`, as curl reads it: https_proxy or HTTPS_PROXY for an
 * https:// root, http_proxy or HTTP_PROXY for an http:// one (a proxy without a scheme is http://),
 * except for the hosts of no_proxy or NO_PROXY ("*": all) and this machine. Undefined when none
 * applies; a proxy that is not an http(s) URL is a SettingsError (only the one that applies).
 */
export function proxyFromEnv(env: NodeJS.ProcessEnv, apiRoot: string): Proxies | undefined {
  const root = new URL(apiRoot);
  if (isLoopback(root.hostname)) return undefined;
  const https = root.protocol === 'https:';
  const found = proxyVariable(env, root);
  if (!found) return undefined;
  const noProxy = firstSet(env, 'no_proxy', 'NO_PROXY')?.[0];
  if (noProxy === '*') return undefined;
  const [value, name] = found;
  const proxy = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  const url = httpUrl(proxy, name, 'http://proxy.example:3128');
  // undici takes none (its words: "invalid url"); a password with an unencoded /, ? or # ends up there.
  if (url.pathname !== '/' || url.search || url.hash || /[?#]/.test(proxy)) {
    throw new SettingsError(`${name} must be a proxy's address alone, http://[user:password@]host:port (a password's /, ? or # percent-encoded), got "${urlShown(proxy)}"`);
  }
  return { [https ? 'httpsProxy' : 'httpProxy']: proxy, noProxy: [noProxy, ...LOOPBACK].filter(Boolean).join(',') };
}
