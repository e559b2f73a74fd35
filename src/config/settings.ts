import { ATTRIBUTION_ENV, BATCHES_PATH_ENV, BUDGET_ENV, checkBatchesPath, DEFAULT_ENV, DEFAULT_PROFILE, isProfileName, LOG_DEFAULT, KEY_ENV, MCP_ENV, mcpServers, NoProfileError, SettingsError, shownName, type ProfileField } from './fields.js';
import { didYouMean } from '../internal/did-you-mean.js';
import { isBlank } from '../internal/blank.js';
import { switchOn } from '../internal/env-switch.js';
import { secretsHidden, urlShown, withoutUserinfo } from '../internal/userinfo.js';

export { DEFAULT_PROFILE, PROFILE_FIELDS, SECRET_FIELDS, SettingsError, type Profile, type ProfileField } from './fields.js';

/** Shows enough of a key to tell keys apart, never enough to use one. */
export function maskKey(key: string | undefined): string {
  if (!key) return '';
  return key.length <= 12 ? '****' : `${key.slice(0, 6)}…${key.slice(-4)}`;
}

/**
 * An API root is an absolute http(s) URL; it is stored and used without a trailing slash. Given as
 * the service's base URL (the root and /v1, as the service's docs write it), it is taken without the /v1.
 */
export function checkApiRoot(value: string, from = 'api_root'): string {
  const url = httpUrl(value, from, 'http://127.0.0.1:8080/api');
  // The client would drop them without a word (and they would show wherever the root is shown). An @
  // elsewhere is one too: http://me:/pass@host is a URL of host "me", the password in its path.
  if (url.username || url.password || value.includes('@')) {
    throw new SettingsError(`${from} must not hold a user name or password ("${urlShown(value)}"): the API key goes in ROUTER_API_KEY or "router login"`);
  }
  // Every path goes after the root: a query or a fragment there would swallow it.
  if (/[?#]/.test(value)) {
    throw new SettingsError(`${from} must not hold a query or a fragment ("${urlShown(value)}"): the API root is the URL before /v1, such as http://127.0.0.1:8080/api`);
  }
  return value.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** What a key may hold: printable ASCII, no spaces (a key with more could not even be sent as a header). */
export const KEY_SYNTAX = /^[\x21-\x7e]+$/;

/** A key as it is sent: spaces around it dropped, a blank one is none, one with a character no key has is refused. */
export function checkKey(value: string | undefined, from: string): string | undefined {
  const key = value?.trim();
  if (!key) return undefined;
  // Copied with its header's word, as curl's -H "Authorization: Bearer …" has it.
  if (/^bearer\s/i.test(key)) throw new SettingsError(`${from} starts with "Bearer ": give the key alone (router sends it as "Authorization: Bearer KEY" itself)`);
  if (!KEY_SYNTAX.test(key)) throw new SettingsError(`${from} holds a character no key has (a space, a line break or a non-ASCII letter): set it again`);
  return key;
}

/** `value` as an absolute http(s) URL, else a SettingsError naming `from` with an example, the credentials hidden. */
export function httpUrl(value: string, from: string, example: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new SettingsError(`${from} must be an http(s) URL such as ${example}, got "${urlShown(value)}"`);
  }
  return url;
}

export { withoutUserinfo };

/**
 * A setting's value as `config get` and `config list` show it: its secrets hidden wherever they stand (a URL's
 * password, a token in its query, an Authorization header of an mcp line), as `roles show` hides them in a role.
 */
export function shownValue(value: string): string {
  return secretsHidden(value);
}

export interface Settings {
  /** The keys when known as settings are read (environment, file); from a keychain or a command, undefined until loadKey (./key-source.ts). */
  apiKey: string | undefined;
  managementKey: string | undefined;
  apiRoot: string | undefined;
  model: string | undefined;
  /** Defaults of `speak` and `embed`, environment first (a flag wins over both where the command reads them). */
  voice: string | undefined;
  speechModel: string | undefined;
  embedModel: string | undefined;
  profile: string;
  /** Calls go to the local usage ledger (off: --no-log, ROUTER_NO_LOG=1, or the profile's log=off). */
  log: boolean;
  /** The budgets in USD as given (checked where they are used), environment first. */
  dailyBudget: string | undefined;
  monthlyBudget: string | undefined;
  /** App attribution (attribution.ts checks them and makes the headers). */
  appUrl: string | undefined;
  appTitle: string | undefined;
  appCategories: string | undefined;
  /** Where batches live under the API root, named outright (else found out and remembered per API root). */
  batchesPath: string | undefined;
  /** MCP servers (ROUTER_MCP, else the profile's mcp), a command line or URL each; --mcp and a role's go before them. */
  mcp: string[] | undefined;
  /** Where each value that is set came from. */
  from: SettingSources;
  /** Fields of a profile named on purpose (--profile, ROUTER_PROFILE) that a variable went before, with another value. */
  overridden?: { field: string; env: string }[];
}

/** Where a setting's value came from: a flag, a variable, a profile's field, a role file, a conversation. */
export type Source =
  | { kind: 'flag' | 'env'; name: string }
  | { kind: 'profile'; name: string; field: string }
  | { kind: 'role'; name: string }
  /** A key kept in the keychain (`account` there), or printed by a profile's command: read when it is needed (./key-source.ts). */
  | { kind: 'keychain'; name: string; field: string; account: string }
  | { kind: 'command'; name: string; field: string; command: string }
  | { kind: 'conversation'; id: string };

export type SettingSources = Partial<Record<Exclude<keyof Settings, 'profile' | 'log' | 'from'>, Source>>;

/** A source as an error names it: `--api-root`, `ROUTER_MODEL`, `model of profile "work"`, `role NAME`. */
export function sourceName(source: Source): string {
  if (source.kind === 'profile' || source.kind === 'command') return `${source.field} of profile "${source.name}"`;
  if (source.kind === 'keychain') return `the keychain (${source.field} of profile "${source.name}")`;
  if (source.kind === 'role') return `role ${source.name}`;
  if (source.kind === 'conversation') return `conversation ${source.id}`;
  return source.name;
}

export interface SettingsInput {
  profile?: string;
  apiRoot?: string;
  /** A key given outright (a program's `apiKey`: router has no flag for one), before the environment's and the profile's. */
  apiKey?: string;
}

/**
 * The one profile-resolution rule: the named profile (flag, then ROUTER_PROFILE), else the
 * current one. A profile named on purpose must exist.
 */
export function profileName(store: { current(): string } | undefined, flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return flag || envProfile(env) || store?.current() || DEFAULT_PROFILE;
}

function envProfile(env: NodeJS.ProcessEnv): string | undefined {
  return isBlank(env.ROUTER_PROFILE) ? undefined : env.ROUTER_PROFILE;
}

/** A setting from the environment: spaces around it dropped, and an empty or blank one is unset. */
export function fromEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return isBlank(value) ? undefined : value.trim();
}

/** Precedence: flags > environment (`ROUTER_*`) > the profile. */
export async function resolveSettings(flags: SettingsInput, env: NodeJS.ProcessEnv = process.env): Promise<Settings> {
  // Read even when the environment holds the key and the root: the profile's other settings still apply.
  const named = flags.profile || envProfile(env);
  const profiles = new (await import('./profile-file.js')).ProfileFile(env.ROUTER_CONFIG_DIR, env);
  const name = profileName(profiles, flags.profile, env);
  const profile = profiles.get(name);
  if (named && !profile) {
    const known = profiles.names();
    const meant = didYouMean(name, known);
    if (meant) throw new NoProfileError(`no profile "${shownName(name)}"${meant}`, name);
    const create = isProfileName(name) ? `: create it with "router login --profile ${name}"` : '';
    throw new NoProfileError(`no profile "${shownName(name)}"${known.length ? ` (profiles: ${known.map(shownName).join(', ')})` : ''}${create}`, name);
  }
  const from: SettingSources = {};
  const overridden: { field: string; env: string }[] = [];
  /** The environment's value, else the profile's, with where it came from. */
  const either = (key: keyof SettingSources, envName: string, envValue: string | undefined, field: ProfileField, profileValue: string | undefined) => {
    const value = envValue ?? profileValue;
    if (named && envValue !== undefined && profileValue !== undefined && profileValue.trim() !== envValue) overridden.push({ field, env: envName });
    if (value !== undefined) from[key] = envValue !== undefined ? { kind: 'env', name: envName } : { kind: 'profile', name, field };
    return value;
  };
  const pick = (key: keyof SettingSources, envName: string, field: ProfileField) => either(key, envName, fromEnv(env, envName), field, profile?.[field]);
  /** A key: the environment's, else the profile's command, its keychain entry or its field (the first two read when needed). */
  const key = (k: 'apiKey' | 'managementKey', envName: string, field: 'api_key' | 'management_key', given?: string) => {
    const givenKey = checkKey(given, k);
    if (givenKey !== undefined) {
      from[k] = { kind: 'flag', name: k };
      return givenKey;
    }
    const envKey = checkKey(env[envName], envName);
    const own = profile?.[field]?.trim();
    if (named && envKey !== undefined && ((own && own !== envKey) || profile?.[`${field}_command`]?.trim() || profile?.[`${field}_keychain`])) overridden.push({ field, env: envName });
    const command = envKey === undefined ? profile?.[`${field}_command`]?.trim() : undefined;
    const account = envKey === undefined ? profile?.[`${field}_keychain`] : undefined;
    if (command) from[k] = { kind: 'command', name, field: `${field}_command`, command };
    else if (account) from[k] = { kind: 'keychain', name, field, account };
    else return either(k, envName, envKey, field, envKey === undefined ? checkKey(profile?.[field], `${field} of profile "${name}"`) : undefined);
    return undefined;
  };
  if (flags.apiRoot !== undefined) from.apiRoot = { kind: 'flag', name: '--api-root' };
  const root = flags.apiRoot ?? pick('apiRoot', 'ROUTER_API_ROOT', 'api_root');
  const batchesPath = pick('batchesPath', BATCHES_PATH_ENV, 'batches_path');
  return {
    profile: name,
    apiKey: key('apiKey', KEY_ENV.api_key, 'api_key', flags.apiKey),
    managementKey: key('managementKey', KEY_ENV.management_key, 'management_key'),
    apiRoot: root === undefined ? undefined : checkApiRoot(root, sourceName(from.apiRoot!)),
    model: pick('model', DEFAULT_ENV.model, 'model'),
    voice: pick('voice', DEFAULT_ENV.voice, 'voice'),
    speechModel: pick('speechModel', DEFAULT_ENV.speech_model, 'speech_model'),
    embedModel: pick('embedModel', DEFAULT_ENV.embed_model, 'embed_model'),
    dailyBudget: pick('dailyBudget', BUDGET_ENV.daily_budget, 'daily_budget'),
    monthlyBudget: pick('monthlyBudget', BUDGET_ENV.monthly_budget, 'monthly_budget'),
    appUrl: pick('appUrl', ATTRIBUTION_ENV.app_url, 'app_url'),
    appTitle: pick('appTitle', ATTRIBUTION_ENV.app_title, 'app_title'),
    appCategories: pick('appCategories', ATTRIBUTION_ENV.app_categories, 'app_categories'),
    batchesPath: batchesPath === undefined ? undefined : checkBatchesPath(batchesPath, sourceName(from.batchesPath!)),
    mcp: mcpServers(pick('mcp', MCP_ENV, 'mcp')),
    log: !switchOn(env.ROUTER_NO_LOG) && (profile?.log ?? LOG_DEFAULT) !== 'off',
    from,
    ...(overridden.length ? { overridden } : {}),
  };
}
