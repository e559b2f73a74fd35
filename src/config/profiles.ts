import Conf from 'conf';
import { chmodSync, existsSync } from 'node:fs';

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

interface ConfigShape {
  current: string;
  profiles: Record<string, Profile>;
}

/** Shows enough of a key to tell keys apart, never enough to use one. */
export function maskKey(key: string | undefined): string {
  if (!key) return '';
  return key.length <= 12 ? '****' : `${key.slice(0, 6)}…${key.slice(-4)}`;
}

/** Named profiles in one private (0600) JSON file; `ROUTER_CONFIG_DIR` moves it. */
export class ProfileStore {
  private readonly conf: Conf<ConfigShape>;

  constructor(dir = process.env.ROUTER_CONFIG_DIR) {
    this.conf = new Conf<ConfigShape>({
      projectName: 'router',
      projectSuffix: '',
      ...(dir ? { cwd: dir } : {}),
      configName: 'config',
      configFileMode: 0o600,
      defaults: { current: DEFAULT_PROFILE, profiles: {} },
    });
  }

  get path(): string {
    return this.conf.path;
  }

  current(): string {
    return this.conf.get('current');
  }

  names(): string[] {
    return Object.keys(this.conf.get('profiles'));
  }

  get(name: string): Profile | undefined {
    return this.conf.get('profiles')[name];
  }

  set(name: string, field: ProfileField, value: string): void {
    const profiles = { ...this.conf.get('profiles') };
    profiles[name] = { ...profiles[name], [field]: value };
    this.write(() => this.conf.set('profiles', profiles));
  }

  unset(name: string, field: ProfileField): void {
    const profiles = { ...this.conf.get('profiles') };
    if (!profiles[name]) return;
    const p = { ...profiles[name] };
    delete p[field];
    profiles[name] = p;
    this.write(() => this.conf.set('profiles', profiles));
  }

  use(name: string): void {
    this.write(() => this.conf.set('current', name));
  }

  delete(name: string): boolean {
    const profiles = { ...this.conf.get('profiles') };
    if (!profiles[name]) return false;
    delete profiles[name];
    this.write(() => {
      this.conf.set('profiles', profiles);
      if (this.current() === name) this.conf.set('current', DEFAULT_PROFILE);
    });
    return true;
  }

  private write(fn: () => void): void {
    fn();
    // conf's mode applies on creation; make sure an older file is private too.
    if (existsSync(this.conf.path)) chmodSync(this.conf.path, 0o600);
  }
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
export function resolveSettings(flags: SettingsInput, env: NodeJS.ProcessEnv = process.env, store?: ProfileStore): Settings {
  const needProfile =
    !!flags.profile || !!env.ROUTER_PROFILE || !env.ROUTER_API_KEY || !(flags.apiRoot ?? env.ROUTER_API_ROOT);
  const profiles = needProfile ? (store ?? new ProfileStore()) : undefined;
  const name = flags.profile ?? env.ROUTER_PROFILE ?? profiles?.current() ?? DEFAULT_PROFILE;
  const profile = profiles?.get(name) ?? {};
  return {
    profile: name,
    apiKey: env.ROUTER_API_KEY || profile.api_key,
    managementKey: env.ROUTER_MANAGEMENT_KEY || profile.management_key,
    apiRoot: flags.apiRoot ?? (env.ROUTER_API_ROOT || profile.api_root),
    model: flags.model ?? (env.ROUTER_MODEL || profile.model),
  };
}
