/**
 * A profile's key read from the keychain to be sent has its mark kept beside the entry's account (a key stored before
 * marks were, changed in the keychain behind router's back, or marked by an older router with some of the key in the
 * mark's kind), so that later runs hide it without reading the keychain.
 */
import type { KeyField } from './fields.js';

export async function keepKeyMark(profile: string, field: KeyField, account: string, key: string, env: NodeJS.ProcessEnv): Promise<void> {
  const [{ ProfileFile }, { readKeyMark, marks, makeKeyMark, markKindKept }] = await Promise.all([import('./profile-file.js'), import('../internal/key-marks.js')]);
  try {
    const p = new ProfileFile(env.ROUTER_CONFIG_DIR, env).get(profile);
    if (p?.[`${field}_keychain`] !== account) return;
    const written = p[`${field}_keychain_mark`];
    const mark = readKeyMark(written);
    // Made anew too when written with an older router's kind, which held some of the key.
    if (mark && marks(mark, key) && markKindKept(written, mark)) return;
    const fresh = makeKeyMark(key);
    if (!fresh) return;
    const { ProfileStore } = await import('./profiles.js');
    new ProfileStore(env.ROUTER_CONFIG_DIR, env).update(profile, { [`${field}_keychain_mark`]: fresh });
  } catch {
    // Not kept (a read-only or damaged config): this run hides the key it read all the same; the next one tries again.
  }
}
