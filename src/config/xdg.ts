import { userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { isBlank } from '../internal/blank.js';
import { SettingsError } from './fields.js';

/**
 * The user's home: HOME when it is an absolute path, else the account's (as the system's user
 * database says), never the current folder.
 */
export function userHome(env: NodeJS.ProcessEnv): string {
  if (!isBlank(env.HOME) && isAbsolute(env.HOME)) return env.HOME;
  let home: string | undefined;
  try {
    home = userInfo().homedir;
  } catch {
    /* an account with no entry in the user database */
  }
  if (!home || !isAbsolute(home)) throw new SettingsError('no home folder: HOME is not set and this account has none; set HOME (or ROUTER_STATE_DIR and ROUTER_CONFIG_DIR)');
  return home;
}

/**
 * An XDG base folder: the variable when it holds an absolute path (the XDG rule: a relative one is
 * ignored), else its default under the user's home.
 */
export function xdgBase(env: NodeJS.ProcessEnv, variable: 'XDG_STATE_HOME' | 'XDG_CONFIG_HOME', underHome: string): string {
  const value = env[variable];
  if (!isBlank(value) && isAbsolute(value)) return value;
  return join(userHome(env), underHome);
}
