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
}

export const PROFILE_FIELDS = ['api_key', 'management_key', 'api_root', 'model', 'voice', 'speech_model', 'embed_model', 'log'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];
/** Settings that hold a model id (`<author>/<slug>`). */
export const MODEL_FIELDS: readonly ProfileField[] = ['model', 'speech_model', 'embed_model'];
/** The environment variable that overrides each default of an operation. */
export const DEFAULT_ENV = { model: 'ROUTER_MODEL', voice: 'ROUTER_VOICE', speech_model: 'ROUTER_SPEECH_MODEL', embed_model: 'ROUTER_EMBED_MODEL' } as const;
export type DefaultField = keyof typeof DEFAULT_ENV;
export const SECRET_FIELDS: readonly ProfileField[] = ['api_key', 'management_key'];
export const DEFAULT_PROFILE = 'default';

/** Settings that cannot be used as they are: an unknown profile, a malformed API root, a corrupt file. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}
