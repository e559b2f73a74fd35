import { readAll } from '../../io/read-stdin.js';
import { CliError, EXIT, usage } from '../../exit-codes.js';
import type { IO } from '../../io/io.js';
import { didYouMean } from '../../../internal/did-you-mean.js';
import { checkApiRoot, fromEnv, KEY_SYNTAX, profileName, shownValue } from '../../../config/settings.js';
import { ATTRIBUTION_ENV, BATCHES_PATH_ENV, BUDGET_ENV, DEFAULT_ENV, MCP_ENV, PROFILE_FIELDS as FIELDS, SECRET_FIELDS, shownName, type KeyField, type Profile, type ProfileField as Field } from '../../../config/fields.js';
import type { SavedKey } from '../../../config/key-store.js';
import { ask } from '../../io/ask.js';

export { FIELDS };
export type { Field };

export const SECRET: readonly string[] = SECRET_FIELDS;

export function field(name: string): Field {
  if (!(FIELDS as readonly string[]).includes(name)) throw usage(`unknown setting "${name}"${didYouMean(name, FIELDS)}: use one of ${FIELDS.join(', ')}`);
  return name as Field;
}

/** The profiles to change (conf, which makes the folder and writes its defaults: a folder that cannot be made is an error). */
export async function store(io: IO) {
  const { ProfileStore } = await import('../../../config/profiles.js');
  return new ProfileStore(io.env.ROUTER_CONFIG_DIR, io.env);
}

/** The profiles to read (`list`, `get`, `path`): read as they are, nothing made or written, so a read-only HOME lists them. */
export async function readStore(io: IO) {
  const { ProfileFile } = await import('../../../config/profile-file.js');
  return new ProfileFile(io.env.ROUTER_CONFIG_DIR, io.env);
}

/** The profile a config command writes or reads: --profile, then the global flag, then ROUTER_PROFILE, then the current one. */
export function profileFor(io: IO, s: { current(): string }, opts: { profile?: string }, flags: { profile?: string }): string {
  return profileName(s, opts.profile || flags.profile, io.env);
}

/** Reads a secret without putting it on the command line: hidden prompt on a TTY, else stdin. */
export async function readSecret(io: IO, label: string, example = 'router login --with-key < key.txt'): Promise<string> {
  let value: string;
  if (io.stdinTTY) {
    if (!io.canPrompt) throw usage(`--no-input: pipe the ${label.toLowerCase()} on stdin instead of typing it`);
    const { password } = await import('@inquirer/prompts');
    value = await ask(io, password, { message: label, mask: '*' });
  } else {
    value = await readAll(io.stdin, io.interrupt);
  }
  value = value.trim();
  if (!value) throw usage(`no ${label.toLowerCase()} given (pipe it on stdin, e.g. ${example})`);
  if (/\s/.test(value)) throw usage(`${label.toLowerCase()} must not contain white space`);
  if (!KEY_SYNTAX.test(value)) throw usage(`${label.toLowerCase()} holds a character no key has (a control character or a non-ASCII letter)`);
  return value;
}

/** An http(s) API root, or a SettingsError (a usage error) naming where it came from. */
export { checkApiRoot as checkRoot };

/**
 * Says where a key was stored: the keychain, or the file and why not the keychain (on stderr even
 * when piped, unless ROUTER_KEYCHAIN=off asked for the file); a key command of the profile goes before it.
 */
export function sayStored(io: IO, saved: SavedKey, profile: string, field: KeyField, p: Profile | undefined): void {
  if (saved.where === 'keychain') io.info(`saved the ${field} of profile "${profile}" in ${saved.place}`);
  else if (saved.why === 'ROUTER_KEYCHAIN=off') io.info(`saved the ${field} of profile "${profile}" in ${saved.place} (ROUTER_KEYCHAIN=off)`);
  else io.note(`saved the ${field} of profile "${profile}" in ${saved.place} (a private 0600 file): no keychain to keep it in (${saved.why})`);
  const command = p?.[`${field}_command`];
  if (command?.trim()) io.note(`${field}_command of profile "${profile}" goes before it (router config unset ${field}_command to use it)`);
}

/** A key of a profile as stored: in the file, or read from the keychain (a CliError, exit 3, when it cannot be). */
export async function storedKey(p: Profile | undefined, profile: string, field: KeyField, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string | undefined> {
  const account = p?.[`${field}_keychain`];
  if (!account) return p?.[field];
  const { readKey, KeyUnavailableError } = await import('../../../config/key-source.js');
  try {
    return await readKey({ kind: 'keychain', name: profile, field, account }, env, signal);
  } catch (err) {
    throw err instanceof KeyUnavailableError ? new CliError(err.message, EXIT.AUTH) : err;
  }
}

/** The variable that goes before each setting of a profile (settings.ts resolveSettings). */
/** The variable that goes before each setting, where one does. */
export const ENV_OF: Partial<Record<Field, string>> = { api_key: 'ROUTER_API_KEY', management_key: 'ROUTER_MANAGEMENT_KEY', api_key_command: 'ROUTER_API_KEY', management_key_command: 'ROUTER_MANAGEMENT_KEY', api_root: 'ROUTER_API_ROOT', ...DEFAULT_ENV, ...BUDGET_ENV, ...ATTRIBUTION_ENV, batches_path: BATCHES_PATH_ENV, mcp: MCP_ENV };

/**
 * Says (on a terminal, or with --verbose) that a variable of the environment goes before the profile's
 * setting: what `config get` prints, or `config set` has just set, is then not what commands use.
 */
export function sayOverridden(io: IO, f: Field): void {
  const name = ENV_OF[f];
  const value = name === undefined ? undefined : fromEnv(io.env, name);
  if (value === undefined) return;
  io.info(`${name} is set${SECRET.includes(f) ? '' : ` (${shownValue(value)})`} and goes before this setting`);
}

/** The profile a config command reads (`get`, `unset`): one named on purpose (--profile, ROUTER_PROFILE) must exist. */
export function existingProfileFor(io: IO, s: { current(): string; get(name: string): unknown; names(): string[] }, opts: { profile?: string }, flags: { profile?: string }): string {
  const profile = profileFor(io, s, opts, flags);
  if (!s.get(profile) && profile !== s.current()) throw noProfile(profile, s.names());
  return profile;
}

/** A profile named on purpose (`use`, `delete`, `get --profile`) that does not exist. */
export function noProfile(name: string, known: string[]): CliError {
  return new CliError(`no profile "${shownName(name)}"${didYouMean(name, known)}; see router config list`, EXIT.NOT_FOUND);
}
