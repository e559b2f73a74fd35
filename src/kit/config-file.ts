/**
 * What the kit reads of router's config folder. A small JSON object kept beside config.json (aliases.json,
 * model-options.json): read whole, changed under its lock and written whole (src/internal/write-whole.ts), so that
 * two processes changing it take turns and one killed midway leaves the old or the new file. And clientFromProfile():
 * a RouterClient with the key and API root of a profile of config.json, as llm's get_key() finds the key its CLI keeps,
 * resolved by the code every router command resolves them with (src/config/settings.ts, src/config/client-settings.ts).
 * Here, not in a file of its own, so that importing the kit loads no module more: config.json, the keychain and a
 * key command are read by a call only.
 */
import { dirname, join } from 'node:path';
import { profilesPath } from '../config/profile-file.js';
import { withFileLock } from '../internal/with-file-lock.js';
import { readLocalText } from '../internal/local-file.js';
import { makeDir } from '../internal/make-dir.js';
import { isRecord, shownGiven } from '../internal/shape.js';
import { keptFileWhy } from '../internal/named-input.js';
import { writeWhole } from '../internal/write-whole.js';
import type { ClientOptions, RouterClient } from '../client/index.js';
import { checkOptions, optionNames } from '../client/option-names.js';
import { ConfigFileError, ProfileError } from './errors.js';
import { ValidationError } from '../client/errors.js';

export { ConfigFileError };

/** The path of `name` in the config folder (ROUTER_CONFIG_DIR, else XDG's: the folder of config.json). */
export function configFilePath(env: NodeJS.ProcessEnv, name: string): string {
  return join(dirname(profilesPath(env.ROUTER_CONFIG_DIR, env)), name);
}

/** The object the file holds, each value checked by `valid`; {} when there is no file yet. */
export function readConfigObject<T>(path: string, valid: (value: unknown) => value is T): Record<string, T> {
  let text: string;
  try {
    text = readLocalText(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    throw new ConfigFileError('unreadable', path, code ? keptFileWhy(code) : `cannot read it (${(err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigFileError('damaged', path, `not valid JSON: ${(err as Error).message}`);
  }
  if (!isRecord(parsed)) throw new ConfigFileError('damaged', path, 'not a JSON object');
  const bad = Object.entries(parsed).find(([, v]) => !valid(v));
  if (bad) throw new ConfigFileError('damaged', path, `"${bad[0]}" holds a value of another kind`);
  return parsed as Record<string, T>;
}

/** Reads, changes and writes the object whole, one process at a time; returns what `change` returns. */
export function changeConfigObject<T, R>(path: string, valid: (value: unknown) => value is T, change: (object: Record<string, T>) => R): R {
  makeDir(dirname(path));
  return withFileLock(path, () => {
    const object = readConfigObject(path, valid);
    const result = change(object);
    writeWhole(path, `${JSON.stringify(object, null, 2)}\n`);
    return result;
  });
}

export interface ProfileClientOptions extends Omit<ClientOptions, 'keyless'> {
  /** The profile (else ROUTER_PROFILE, else the current one, `router config use`); one named must exist. */
  profile?: string | undefined;
  /** The environment router's variables are read from (ROUTER_API_KEY, ROUTER_API_ROOT, ROUTER_PROFILE, ROUTER_CONFIG_DIR, the proxies): `process.env` if absent. */
  env?: NodeJS.ProcessEnv | undefined;
  /** Send the management key (ROUTER_MANAGEMENT_KEY, the profile's management_key) where one is set, as `router keys` does. */
  management?: boolean | undefined;
  /** Stops reading a key from the keychain or a key command. */
  signal?: AbortSignal | undefined;
  /**
   * Hears the notes router prints on stderr as it reads these settings, word for word: a `ROUTER_*` variable it does not
   * read that is close to one it does, a variable that goes before the profile named. Without it, nothing is said.
   */
  onNote?: ((message: string) => void) | undefined;
}

const OPTIONS = optionNames<ProfileClientOptions>()({
  profile: 1, env: 1, management: 1, signal: 1, onNote: 1, apiKey: 1, apiRoot: 1, timeoutMs: 1, maxRetries: 1, userAgent: 1, headers: 1, onRetry: 1, onPlainHttp: 1, dispatcher: 1, proxy: 1,
});

/**
 * A client of the profile: `apiKey` and `apiRoot` given here, else ROUTER_API_KEY and ROUTER_API_ROOT, else the
 * profile's (its key in the config file, the keychain or printed by its key command); its attribution headers and
 * the proxy `env` names for the root, as router sends them. A ProfileError when it gives no client.
 */
export async function clientFromProfile(opts: ProfileClientOptions = {}): Promise<RouterClient> {
  checkProfileOptions(opts);
  const { profile, env = process.env, management, signal, onNote, apiKey, apiRoot, headers, proxy, ...rest } = opts;
  const [{ resolveSettings, checkApiRoot }, shared, { RouterClient, DEFAULT_API_ROOT }] = await Promise.all([import('../config/settings.js'), import('../config/client-settings.js'), import('../client/index.js')]);
  try {
    const settings = await resolveSettings({ profile, apiRoot: apiRoot === undefined ? undefined : checkApiRoot(apiRoot, 'apiRoot'), apiKey }, env);
    if (onNote) for (const line of await notesOf(settings, env, !!management)) onNote(line);
    const sent = await shared.withSentKey(settings, env, { management, signal }).catch(async (err: unknown) => {
      // Only a key read from a keychain or a key command fails here: key-source.js is loaded already.
      throw err instanceof (await import('../config/key-source.js')).KeyUnavailableError ? new ProfileError('key_unavailable', err.message, settings.profile, { cause: err }) : err;
    });
    const name = sent.settings.profile;
    if (!sent.key) throw new ProfileError('no_key', `no API key for profile "${name}": pass apiKey, set ROUTER_API_KEY, or store one with "router login --profile ${name}"`, name);
    const made = await shared.connectionOptions(sent.settings, sent.key, env, DEFAULT_API_ROOT);
    return new RouterClient({ ...rest, ...made, headers: { ...made.headers, ...headers }, proxy: proxy ?? made.proxy });
  } catch (err) {
    throw await asProfileError(err);
  }
}

/**
 * The options' shape, as `router --profile` checks its own: a name given as the options (`clientFromProfile('work')`,
 * as llm's get_key(name)) was read as a client's options "0", "1", …; a profile that is no string failed in a
 * TypeError; an empty one took the current profile, where `router --profile ''` is refused.
 */
function checkProfileOptions(opts: unknown): asserts opts is ProfileClientOptions {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) {
    const given = typeof opts === 'string' ? `: a profile's name goes as { profile: ${JSON.stringify(opts)} }` : `, not ${shownGiven(opts)}`;
    throw new ValidationError(`clientFromProfile() takes an object of options${given}`);
  }
  checkOptions('clientFromProfile()', opts, OPTIONS);
  const { profile, onNote } = opts as ProfileClientOptions;
  if (onNote !== undefined && typeof onNote !== 'function') throw new ValidationError(`clientFromProfile() onNote must be a function that takes each note, not ${shownGiven(onNote)}`);
  if (profile !== undefined && (typeof profile !== 'string' || !profile)) {
    throw new ValidationError(`clientFromProfile() profile must be a profile's name${typeof profile === 'string' ? ', not empty (without it, the current profile is used)' : `, not ${shownGiven(profile)}`}`);
  }
}

/** The settings a client of the profile is made with: a variable that goes before another (a model, a budget) is the CLI's note only. */
const CLIENT_FIELDS = ['api_key', 'api_root', 'app_url', 'app_title', 'app_categories'];

/** The notes `router` says as it connects with these settings (src/config/env-names.ts), of the settings a client is made with. */
async function notesOf(settings: import('../config/settings.js').Settings, env: NodeJS.ProcessEnv, management: boolean): Promise<string[]> {
  const overridden = settings.overridden?.filter((o) => CLIENT_FIELDS.includes(o.field) || (management && o.field === 'management_key'));
  return (await import('../config/env-names.js')).settingsNotes({ profile: settings.profile, overridden: overridden?.length ? overridden : undefined }, env);
}

/** A settings error as a ProfileError of its code; any other error (an abort, a ProfileError) as it is. */
async function asProfileError(err: unknown): Promise<unknown> {
  const { NoProfileError, DamagedFileError, SettingsError } = await import('../config/fields.js');
  if (err instanceof NoProfileError) return new ProfileError('not_found', err.message, err.profile, { cause: err });
  if (err instanceof DamagedFileError) return new ProfileError('damaged', err.message, undefined, { cause: err });
  if (err instanceof SettingsError) return new ProfileError('invalid', err.message, undefined, { cause: err });
  return err;
}
