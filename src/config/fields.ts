/** What a profile holds; shared by the profile store and settings resolution. */
export interface Profile {
  api_key?: string;
  management_key?: string;
  api_root?: string;
  model?: string;
  /** `off`: calls are not written to the local usage ledger. */
  log?: string;
}

export const PROFILE_FIELDS = ['api_key', 'management_key', 'api_root', 'model', 'log'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];
export const SECRET_FIELDS: readonly ProfileField[] = ['api_key', 'management_key'];
export const DEFAULT_PROFILE = 'default';

/** Settings that cannot be used as they are: an unknown profile, a malformed API root, a corrupt file. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}
