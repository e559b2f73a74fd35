/**
 * What a client is made with, from the settings (./settings.ts): the key it sends, read where it lives (the
 * environment, the file, the keychain, a key command), the API root, the proxy and the app attribution headers.
 * The one piece router's commands (src/cli/context.ts) and the kit's clientFromProfile (src/kit/config-file.ts) share.
 */
import type { Proxies } from './proxy.js';
import { sourceName, type Settings } from './settings.js';

export interface SentKey {
  /** The settings with the key that is sent read, where it was not yet (a keychain's, a key command's). */
  settings: Settings;
  /** The key sent: the management key when asked for and set, else the API key; undefined when none is set. */
  key: string | undefined;
}

/**
 * Reads the key a client sends where it lives: only that one, only now. One that is set but cannot be had
 * (its keychain entry gone, its command failed) is a KeyUnavailableError (./key-source.ts).
 */
export async function withSentKey(settings: Settings, env: NodeJS.ProcessEnv, opts: { management?: boolean | undefined; signal?: AbortSignal | undefined } = {}): Promise<SentKey> {
  const which = opts.management && settings.from.managementKey ? 'managementKey' : 'apiKey';
  const from = settings.from[which];
  if (settings[which] === undefined && (from?.kind === 'keychain' || from?.kind === 'command')) {
    const { loadKey } = await import('./key-source.js');
    settings = { ...settings, [which]: await loadKey(settings, which, env, opts.signal) };
  }
  return { settings, key: opts.management ? (settings.managementKey ?? settings.apiKey) : settings.apiKey };
}

export interface ConnectionOptions {
  apiKey: string;
  /** Undefined: the service's (DEFAULT_API_ROOT). */
  apiRoot: string | undefined;
  headers: Record<string, string>;
  /** What HTTP_PROXY, HTTPS_PROXY and NO_PROXY of `env` say for the root. */
  proxy: Proxies | undefined;
}

const ATTRIBUTION = { app_url: 'appUrl', app_title: 'appTitle', app_categories: 'appCategories' } as const;

/** The client's options of the settings and the key sent (`serviceRoot`: the client's DEFAULT_API_ROOT, where no root is set); a setting that cannot be sent (an app URL that is no URL) is a SettingsError naming where it came from. */
export async function connectionOptions(settings: Settings, key: string, env: NodeJS.ProcessEnv, serviceRoot: string): Promise<ConnectionOptions> {
  const [{ proxyFromEnv }, { attributionHeaders }] = await Promise.all([import('./proxy.js'), import('./attribution.js')]);
  const proxy = proxyFromEnv(env, settings.apiRoot ?? serviceRoot);
  const headers = attributionHeaders(settings, (f) => sourceName(settings.from[ATTRIBUTION[f]] ?? { kind: 'env', name: f }));
  return { apiKey: key, apiRoot: settings.apiRoot, headers, proxy };
}
