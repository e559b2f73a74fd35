/**
 * Where `router login`, `config set` and `auth migrate` put a key: the keychain when there is one
 * (the file then holds only where it is), else the profile's 0600 file, saying why.
 */
import type { KeyField, Profile } from './fields.js';
import type { ProfileStore } from './profiles.js';
import { keychainAccount, KeychainError, keychainName, keychainOff } from './keychain.js';

export interface SavedKey {
  where: 'keychain' | 'file';
  /** The keychain's name, or the file's path. */
  place: string;
  /** Why not the keychain, when the key went to the file. */
  why?: string;
}

/** Stores `key` as `field` of `profile`: in the keychain when it can, else in the file. */
export async function saveKey(store: ProfileStore, profile: string, field: KeyField, key: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<SavedKey> {
  let why = 'ROUTER_KEYCHAIN=off';
  if (!keychainOff(env)) {
    const account = keychainAccount(profile, field, store.path);
    try {
      await (await import('./keychain.js')).keychainSet(account, key, env, signal);
      const old = store.get(profile)?.[`${field}_keychain`];
      // What lets every run hide the key without reading the keychain (docs/keys.md).
      const mark = (await import('../internal/key-marks.js')).makeKeyMark(key);
      store.update(profile, { [field]: undefined, [`${field}_keychain`]: account, [`${field}_keychain_mark`]: mark });
      if (old && old !== account) await forgetEntry(old, env);
      return { where: 'keychain', place: keychainName() };
    } catch (err) {
      if (!(err instanceof KeychainError)) throw err;
      why = err.message;
    }
  }
  const old = store.get(profile)?.[`${field}_keychain`];
  store.update(profile, { [field]: key, [`${field}_keychain`]: undefined, [`${field}_keychain_mark`]: undefined });
  if (old) await forgetEntry(old, env);
  return { where: 'file', place: store.path, why };
}

/** Removes a key of a profile wherever it is kept (the file, the keychain); a keychain entry that cannot be removed is said in the result. */
export async function forgetKey(store: ProfileStore, profile: string, field: KeyField, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const account = store.get(profile)?.[`${field}_keychain`];
  store.update(profile, { [field]: undefined, [`${field}_keychain`]: undefined, [`${field}_keychain_mark`]: undefined });
  return account ? forgetEntry(account, env) : undefined;
}

/** Removes a keychain entry, on the keychain `env` names; what went wrong, if anything. */
export async function forgetEntry(account: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    await (await import('./keychain.js')).keychainDelete(account, env);
    return undefined;
  } catch (err) {
    return `could not remove the keychain entry "${account}": ${(err as Error).message}`;
  }
}

/** Where a profile keeps a key: 'keychain', 'file', 'command', or undefined for none. */
export function keyPlace(p: Profile | undefined, field: KeyField): 'keychain' | 'file' | 'command' | undefined {
  if (p?.[`${field}_command`]?.trim()) return 'command';
  if (p?.[`${field}_keychain`]) return 'keychain';
  return p?.[field] !== undefined ? 'file' : undefined;
}
