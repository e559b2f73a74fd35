export interface Profile {
  api_key?: string;
  management_key?: string;
  api_root?: string;
  model?: string;
}

export const PROFILE_FIELDS = ['api_key', 'management_key', 'api_root', 'model'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];
export const SECRET_FIELDS: readonly ProfileField[] = ['api_key', 'management_key'];
export const DEFAULT_PROFILE = 'default';

/** Shows enough of a key to tell keys apart, never enough to use one. */
export function maskKey(key: string | undefined): string {
  if (!key) return '';
  return key.length <= 12 ? '****' : `${key.slice(0, 6)}…${key.slice(-4)}`;
}

export interface Settings {
  apiKey: string | undefined;
  managementKey: string | undefined;
  apiRoot: string | undefined;
  model: string | undefined;
  profile: string;
}

export interface SettingsInput {
  profile?: string;
  apiRoot?: string;
  model?: string;
}

/** Precedence: flags > environment (`ROUTER_*`) > the profile. */
export async function resolveSettings(flags: SettingsInput, env: NodeJS.ProcessEnv = process.env): Promise<Settings> {
  // The profile file is read only when env and flags leave something open (conf is slow to load).
  const needProfile =
    !!flags.profile || !!env.ROUTER_PROFILE || !env.ROUTER_API_KEY || !(flags.apiRoot ?? env.ROUTER_API_ROOT);
  const profiles = needProfile ? new (await import('./profiles.js')).ProfileStore() : undefined;
  const name = flags.profile || env.ROUTER_PROFILE || profiles?.current() || DEFAULT_PROFILE;
  const profile = profiles?.get(name) ?? {};
  return {
    profile: name,
    apiKey: env.ROUTER_API_KEY || profile.api_key,
    managementKey: env.ROUTER_MANAGEMENT_KEY || profile.management_key,
    apiRoot: flags.apiRoot ?? (env.ROUTER_API_ROOT || profile.api_root),
    model: flags.model ?? (env.ROUTER_MODEL || profile.model),
  };
}
