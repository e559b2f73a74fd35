/** What a profile holds; shared by the profile store and settings resolution. */
export interface Profile {
  api_key?: string;
  management_key?: string;
  api_root?: string;
  model?: string;
  /** Defaults of `router speak` and `router embed` (their --voice and --model). */
  voice?: string;
  speech_model?: string;
  embed_model?: string;
  /** `off`: calls are not written to the local usage ledger. */
  log?: string;
  /** USD a day (UTC) and a calendar month (UTC) this profile's calls may spend, by the usage ledger. */
  daily_budget?: string;
  monthly_budget?: string;
  /** A command whose stdout is the key (`pass show router`), run when the key is needed (src/config/key-command.ts). */
  api_key_command?: string;
  management_key_command?: string;
  /** Where a key kept in the keychain is: its account there (src/config/keychain.ts); the file then holds no key. */
  api_key_keychain?: string;
  management_key_keychain?: string;
  /** A key kept in the keychain known in a text without reading it there: src/internal/key-marks.ts. */
  api_key_keychain_mark?: string;
  management_key_keychain_mark?: string;
  /** App attribution, sent with every call: HTTP-Referer, X-OpenRouter-Title (and X-Title), X-OpenRouter-Categories. */
  app_url?: string;
  app_title?: string;
  app_categories?: string;
  /** Where the service keeps its batches, under the API root (`/v1/batches`, `/beta/batches`): found out when unset. */
  batches_path?: string;
  /** MCP servers whose tools chat, chat -i and responses offer: a command line or URL a line (mcpServers). */
  mcp?: string;
}

export const PROFILE_FIELDS = ['api_key', 'management_key', 'api_root', 'model', 'voice', 'speech_model', 'embed_model', 'log', 'daily_budget', 'monthly_budget', 'api_key_command', 'management_key_command', 'app_url', 'app_title', 'app_categories', 'batches_path', 'mcp'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];
/** Calls are logged unless a profile's log is off (or --no-log, ROUTER_NO_LOG=1). */
export const LOG_DEFAULT = 'on';
/** Settings that hold a model id (`<author>/<slug>`). */
export const MODEL_FIELDS: readonly ProfileField[] = ['model', 'speech_model', 'embed_model'];
/** The environment variable that overrides each default of an operation. */
export const DEFAULT_ENV = { model: 'ROUTER_MODEL', voice: 'ROUTER_VOICE', speech_model: 'ROUTER_SPEECH_MODEL', embed_model: 'ROUTER_EMBED_MODEL' } as const;
export type DefaultField = keyof typeof DEFAULT_ENV;
/** The variables a key is read from (tools and MCP servers start without them: src/kit/tool-env.ts). */
export const KEY_ENV = { api_key: 'ROUTER_API_KEY', management_key: 'ROUTER_MANAGEMENT_KEY' } as const;
/** Settings that hold an amount of USD; the environment variable that overrides each. */
export const BUDGET_ENV = { daily_budget: 'ROUTER_DAILY_BUDGET', monthly_budget: 'ROUTER_MONTHLY_BUDGET' } as const;
/** Settings of app attribution; the environment variable that overrides each. */
export const ATTRIBUTION_ENV = { app_url: 'ROUTER_APP_URL', app_title: 'ROUTER_APP_TITLE', app_categories: 'ROUTER_APP_CATEGORIES' } as const;

/** The environment variable that goes before a profile's mcp (its servers, one a line). */
export const MCP_ENV = 'ROUTER_MCP';

/** The MCP servers a profile's mcp or ROUTER_MCP holds: a command line or URL a line, blank lines left out. */
export function mcpServers(value: string | undefined): string[] | undefined {
  const list = (value ?? '').split('\n').map((l) => l.trim()).filter(Boolean);
  return list.length ? list : undefined;
}

/** The environment variable that names where batches live (the profile's batches_path). */
export const BATCHES_PATH_ENV = 'ROUTER_BATCHES_PATH';

/** A batches path as given: a path under the API root, such as /beta/batches (a trailing slash dropped). */
export function checkBatchesPath(value: string, from: string): string {
  const path = value.trim().replace(/\/+$/, '');
  if (!/^(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/.test(path) || path.split('/').some((p) => p === '.' || p === '..')) {
    throw new SettingsError(`${from} must be a path under the API root such as /v1/batches or /beta/batches, got "${shownName(value)}"`);
  }
  return path;
}
export const SECRET_FIELDS: readonly ProfileField[] = ['api_key', 'management_key'];
export type KeyField = 'api_key' | 'management_key';
/** What the file may hold of a profile: its settings, and where in the keychain its keys are. */
export type StoredField = keyof Profile;
export const DEFAULT_PROFILE = 'default';

/** Settings that cannot be used as they are: an unknown profile, a malformed API root, a corrupt file. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** A profile named on purpose (--profile, ROUTER_PROFILE, a program's `profile`) that the config file does not hold. */
export class NoProfileError extends SettingsError {
  override name = 'NoProfileError';
  constructor(message: string, readonly profile: string) {
    super(message);
  }
}

/** A file router keeps (config.json) that it cannot make sense of: named by `path`; the CLI's exit 1, as every damaged store file. */
export class DamagedFileError extends SettingsError {
  override name = 'DamagedFileError';
  constructor(message: string, readonly path: string) {
    super(message);
  }
}

const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isProfileName(name: string): boolean {
  return PROFILE_NAME.test(name);
}

/** A profile about to be made must have a name a user can type back (existing ones are used as they are). */
export function checkNewProfile(name: string, known: readonly string[]): void {
  if (known.includes(name) || isProfileName(name)) return;
  throw new SettingsError(`profile name "${shownName(name)}": use 1 to 64 letters, digits, ".", "-" or "_", starting with a letter or digit`);
}

/** A profile name as a message shows it: a long one cut, so that one line stays one line. */
export function shownName(name: string): string {
  const oneLine = JSON.stringify(name).slice(1, -1);
  return oneLine.length > 40 ? `${oneLine.slice(0, 40)}…` : oneLine;
}
