/** Flags the setup commands (login, auth, config, serve) share, each defined once; spread into a command's table. */

import { InvalidArgumentError } from '../commander.js';

const PROFILE = '-p, --profile <name>';

/** A typed --profile "" (an unset shell variable) is refused, not taken as "the current profile". */
export function profileArg(value: string): string {
  if (value === '') throw new InvalidArgumentError('must not be empty (with no --profile, the current profile is used).');
  return value;
}

/** The profile a command reads or writes a setting of (it goes before the global --profile). */
export const PROFILE_FLAGS = { profile: { flags: PROFILE, help: 'profile (default: the current one)', complete: 'profiles', parse: profileArg } } as const;

/** The profile a command writes a whole set of settings to. */
export const WRITTEN_PROFILE_FLAGS = { profile: { flags: PROFILE, help: 'profile to write (default: the current one)', complete: 'profiles', parse: profileArg } } as const;

/** `--json`, its help saying what the JSON holds. */
export function jsonFlags<const H extends string>(help: H) {
  return { json: { flags: '--json', help } } as const;
}
