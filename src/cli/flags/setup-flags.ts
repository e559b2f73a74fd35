/** Flags the setup commands (login, auth, config, serve) share, each defined once; spread into a command's table. */

const PROFILE = '-p, --profile <name>';

/** The profile a command reads or writes a setting of (it goes before the global --profile). */
export const PROFILE_FLAGS = { profile: { flags: PROFILE, help: 'profile (default: the current one)', complete: 'profiles' } } as const;

/** The profile a command writes a whole set of settings to. */
export const WRITTEN_PROFILE_FLAGS = { profile: { flags: PROFILE, help: 'profile to write (default: the current one)', complete: 'profiles' } } as const;

/** `--json`, its help saying what the JSON holds. */
export function jsonFlags<const H extends string>(help: H) {
  return { json: { flags: '--json', help } } as const;
}
