/**
 * A profile's key read from the keychain to be sent has its mark kept beside the entry's account (a key stored before
 * marks were, or changed in the keychain behind router's back), so that later runs hide it without reading the keychain.
 */
import type { KeyField } from './fields.js';

export async function keepKeyMark(profile: string, field: KeyField, account: string, key: string, env: NodeJS.ProcessEnv): Promise<void> {
  const [{ ProfileFile }, { readKeyMark, marks, makeKeyMark }] = await Promise.all([import('./profile-file.js'), import('../internal/key-marks.js')]);
  try {
    const p = new ProfileFile(env.ROUTER_CONFIG_DIR, env).get(profile);
    if (p?.[`${field}_keychain`] !== account) return;
    const mark = readKeyMark(p[`${field}_keychain_mark`]);
    if (mark && marks(mark, key)) return;
    const fresh = makeKeyMark(key);
    if (!fresh) return;
    const { ProfileStore } = await import('./profiles.js');
    new ProfileStore(env.ROUTER_CONFIG_DIR, env).update(profile, { [`${field}_keychain_mark`]: fresh });
  } catch {
    // Not kept (a read-only or damaged config): this run hides the key it read all the same; the next one tries again.
  }
}
