/**
 * Every key a run knows without asking anyone: the environment's and each profile's kept in the config file. Keys
 * kept in the keychain or printed by a profile's key command are left out: reading them costs what the run that
 * needs them pays (a native module, a password manager's prompt), so only a key a run read is hidden (docs/keys.md).
 */
import { KEY_ENV, SECRET_FIELDS } from './fields.js';
import { ProfileFile } from './profile-file.js';
import { hideable, hideSecrets } from '../internal/hide-secrets.js';

export interface KnownKeys {
  keys: string[];
  /** Why the profiles' keys could not be read (a damaged config file): they are not among `keys`. */
  unread?: string;
}

export function knownKeys(env: NodeJS.ProcessEnv): KnownKeys {
  const keys = Object.values(KEY_ENV).map((name) => env[name]);
  let unread: string | undefined;
  try {
    const file = new ProfileFile(env.ROUTER_CONFIG_DIR, env);
    for (const name of file.names()) for (const field of SECRET_FIELDS) keys.push(file.get(name)?.[field]);
  } catch (err) {
    unread = (err as Error).message;
  }
  return { keys: [...new Set(keys.map((k) => (typeof k === 'string' ? k.trim() : '')).filter(Boolean))], ...(unread === undefined ? {} : { unread }) };
}

/** `text` with every key of knownKeys() hidden: a usage error, printed before a run registered its keys. */
export function withKnownKeysHidden(text: string, env: NodeJS.ProcessEnv): string {
  return hideSecrets(text, knownKeys(env).keys.filter(hideable));
}
