/**
 * Every key a run knows without asking anyone: the environment's and each profile's kept in the config file; and the
 * marks of those kept in the keychain (src/internal/key-marks.ts), which find them whole in a text without reading
 * the keychain. Keys printed by a profile's key command are left out: reading them costs what the run that needs
 * them pays (a password manager's prompt), so only such a key a run read is hidden (docs/keys.md).
 */
import { KEY_ENV, SECRET_FIELDS, type KeyField } from './fields.js';
import { ProfileFile } from './profile-file.js';
import { hideable, hideSecrets } from '../internal/hide-secrets.js';
import { markedKeysIn, readKeyMark, type KeyMark } from '../internal/key-marks.js';

export interface KnownKeys {
  keys: string[];
  /** The marks of the profiles' keys kept in the keychain. */
  marks: KeyMark[];
  /** Why the profiles' keys could not be read (a damaged config file): they are not among `keys`. */
  unread?: string;
}

export function knownKeys(env: NodeJS.ProcessEnv): KnownKeys {
  const keys = Object.values(KEY_ENV).map((name) => env[name]);
  const marks: KeyMark[] = [];
  let unread: string | undefined;
  try {
    const file = new ProfileFile(env.ROUTER_CONFIG_DIR, env);
    for (const name of file.names()) {
      for (const field of SECRET_FIELDS) {
        const p = file.get(name);
        keys.push(p?.[field]);
        const mark = p?.[`${field as KeyField}_keychain`] ? readKeyMark(p[`${field as KeyField}_keychain_mark`]) : undefined;
        if (mark && !marks.some((m) => m.hash === mark.hash)) marks.push(mark);
      }
    }
  } catch (err) {
    unread = (err as Error).message;
  }
  return { keys: [...new Set(keys.map((k) => (typeof k === 'string' ? k.trim() : '')).filter(Boolean))], marks, ...(unread === undefined ? {} : { unread }) };
}

/** `text` with every key of knownKeys() hidden: a usage error, printed before a run registered its keys. */
export function withKnownKeysHidden(text: string, env: NodeJS.ProcessEnv): string {
  const { keys, marks } = knownKeys(env);
  return hideSecrets(text, [...keys.filter(hideable), ...markedKeysIn(text, marks)]);
}
