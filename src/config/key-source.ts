/**
 * A key where it lives: already known (environment, the 0600 file), or read when a command needs
 * it, from the keychain or a profile's key command; once a run (a REPL asks again for each call).
 */
import { keychainName, KeychainError } from './keychain.js';
import { sourceName, type Settings, type Source } from './settings.js';
import type { KeyField } from './fields.js';

/** A key that is set but cannot be had: its keychain entry is gone or unreadable, its command failed. */
export class KeyUnavailableError extends Error {
  override name = 'KeyUnavailableError';
}

const loaded = new WeakMap<Source, Promise<string>>();

/** The key `which` of the settings (undefined when none is set), read from where it lives. */
export async function loadKey(settings: Settings, which: 'apiKey' | 'managementKey', env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string | undefined> {
  const known = settings[which];
  const from = settings.from[which];
  if (known !== undefined || !from || (from.kind !== 'keychain' && from.kind !== 'command')) return known;
  let key = loaded.get(from);
  if (!key) {
    key = readKey(from, env, signal);
    loaded.set(from, key);
    key.catch(() => loaded.delete(from));
  }
  return key;
}

/** A key from the keychain or a key command, read now. */
export async function readKey(from: Extract<Source, { kind: 'keychain' | 'command' }>, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string> {
  if (from.kind === 'command') {
    const { runKeyCommand, KeyCommandError } = await import('./key-command.js');
    try {
      return await runKeyCommand(from.command, sourceName(from), env, signal);
    } catch (err) {
      throw err instanceof KeyCommandError ? new KeyUnavailableError(err.message) : err;
    }
  }
  const { keychainGet } = await import('./keychain.js');
  const again = `store it again: router login --profile ${from.name}`;
  let key: string | undefined;
  try {
    key = await keychainGet(from.account, env, signal);
  } catch (err) {
    if (!(err instanceof KeychainError)) throw err;
    throw new KeyUnavailableError(`the ${from.field} of profile "${from.name}" is kept in ${keychainName()}, which cannot be read: ${err.message} (export ROUTER_${from.field.toUpperCase()} for this run, or ${again})`);
  }
  if (key === undefined) throw new KeyUnavailableError(`the ${from.field} of profile "${from.name}" was kept in ${keychainName()}, which no longer has it: ${again}`);
  await (await import('./key-mark-kept.js')).keepKeyMark(from.name, from.field as KeyField, from.account, key, env);
  return key;
}
