import { BUDGET_ENV, DEFAULT_ENV, DEFAULT_PROFILE, isProfileName, SettingsError, shownName } from './fields.js';
import { didYouMean } from '../internal/did-you-mean.js';
import { isBlank } from '../internal/blank.js';

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
  // The client would drop them without a word (and they would show wherever the root is shown).
  if (url.username || url.password) {
    throw new SettingsError(`${from} must not hold a user name or password ("${withoutUserinfo(value)}"): the API key goes in ROUTER_API_KEY or "router login"`);
  }
  // Every path goes after the root: a query or a fragment there would swallow it.
  if (/[?#]/.test(value)) {
    throw new SettingsError(`${from} must not hold a query or a fragment ("${withoutUserinfo(value)}"): the API root is the URL before /v1, such as http://127.0.0.1:8080/api`);
  }
  return value.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** What a key may hold: printable ASCII, no spaces (a key with more could not even be sent as a header). */
export const KEY_SYNTAX = /^[\x21-\x7e]+$/;

/** A key as it is sent: spaces around it dropped, a blank one is none, one with a character no key has is refused. */
export function checkKey(value: string | undefined, from: string): string | undefined {
  const key = value?.trim();
  if (!key) return undefined;
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
    throw new SettingsError(`${from} must be an http(s) URL such as ${example}, got "${withoutUserinfo(value)}"`);
  }
  return url;
}

/** A URL as it may be shown: a user name and password in it replaced by ***. */
export function withoutUserinfo(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/*)[^/?#]*@/i, '$1***@');
}

export interface Settings {
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
}

export interface SettingsInput {
  profile?: string;
  apiRoot?: string;
  model?: string;
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
  const profiles = new (await import('./profile-file.js')).ProfileFile(env.ROUTER_CONFIG_DIR);
  const name = profileName(profiles, flags.profile, env);
  const profile = profiles.get(name);
  if (named && !profile) {
    const known = profiles.names();
    const meant = didYouMean(name, known);
    if (meant) throw new SettingsError(`no profile "${shownName(name)}"${meant}`);
    const create = isProfileName(name) ? `: create it with "router login --profile ${name}"` : '';
    throw new SettingsError(`no profile "${shownName(name)}"${known.length ? ` (profiles: ${known.map(shownName).join(', ')})` : ''}${create}`);
  }
  const envRoot = fromEnv(env, 'ROUTER_API_ROOT');
  const rootFrom = flags.apiRoot !== undefined ? '--api-root' : envRoot ? 'ROUTER_API_ROOT' : `api_root of profile "${name}"`;
  const root = flags.apiRoot ?? envRoot ?? profile?.api_root;
  return {
    profile: name,
    apiKey: checkKey(env.ROUTER_API_KEY, 'ROUTER_API_KEY') ?? checkKey(profile?.api_key, `api_key of profile "${name}"`),
    managementKey: checkKey(env.ROUTER_MANAGEMENT_KEY, 'ROUTER_MANAGEMENT_KEY') ?? checkKey(profile?.management_key, `management_key of profile "${name}"`),
    apiRoot: root === undefined ? undefined : checkApiRoot(root, rootFrom),
    model: flags.model ?? (fromEnv(env, DEFAULT_ENV.model) ?? profile?.model),
    voice: fromEnv(env, DEFAULT_ENV.voice) ?? profile?.voice,
    speechModel: fromEnv(env, DEFAULT_ENV.speech_model) ?? profile?.speech_model,
    embedModel: fromEnv(env, DEFAULT_ENV.embed_model) ?? profile?.embed_model,
    dailyBudget: fromEnv(env, BUDGET_ENV.daily_budget) ?? profile?.daily_budget,
    monthlyBudget: fromEnv(env, BUDGET_ENV.monthly_budget) ?? profile?.monthly_budget,
    log: !['1', 'true', 'yes'].includes((env.ROUTER_NO_LOG ?? '').toLowerCase()) && profile?.log !== 'off',
  };
}
