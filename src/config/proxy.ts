import { isBlank } from '../internal/blank.js';
import { httpUrl } from './settings.js';

/** What the client's `proxy` option takes. */
export interface Proxies {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

/** This machine: never through a proxy (as Go's and gh's ProxyFromEnvironment do), whatever NO_PROXY says. */
const LOOPBACK = ['localhost', '127.0.0.1', '::1', '[::1]'];

/** The first of the names that is set (a blank one is unset), with the name it came from. */
function firstSet(env: NodeJS.ProcessEnv, ...names: string[]): [string, string] | undefined {
  for (const name of names) if (!isBlank(env[name])) return [env[name]!.trim(), name];
  return undefined;
}

function checkedProxy(found: [string, string] | undefined): string | undefined {
  if (!found) return undefined;
  const [value, name] = found;
  httpUrl(value, name, 'http://proxy.example:3128');
  return value;
}

/**
 * The proxies the environment names, as curl and gh read them: https_proxy or HTTPS_PROXY for
 * https:// roots, http_proxy or HTTP_PROXY for http:// ones, no_proxy or NO_PROXY for the hosts
 * reached directly ("*": none goes through a proxy). Undefined when no proxy applies.
 */
export function proxyFromEnv(env: NodeJS.ProcessEnv): Proxies | undefined {
  const httpsProxy = checkedProxy(firstSet(env, 'https_proxy', 'HTTPS_PROXY'));
  const httpProxy = checkedProxy(firstSet(env, 'http_proxy', 'HTTP_PROXY'));
  if (!httpsProxy && !httpProxy) return undefined;
  const noProxy = firstSet(env, 'no_proxy', 'NO_PROXY')?.[0];
  if (noProxy === '*') return undefined;
  return { httpProxy, httpsProxy, noProxy: [noProxy, ...LOOPBACK].filter(Boolean).join(',') };
}
