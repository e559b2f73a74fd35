/**
 * The operating system's keychain (Secret Service on Linux, Keychain on macOS, Credential Manager on
 * Windows) through @napi-rs/keyring, loaded on first use only: its native module costs ~150 ms to
 * load, which only the runs that read or write a key there pay. ROUTER_KEYCHAIN=off keeps keys in the file.
 */
import { firstWholeWords } from '../internal/key-safe-cut.js';
import { isBlank } from '../internal/blank.js';
import { busSilence } from './bus-answers.js';
import type { KeychainCall } from './keychain-child.js';

/** The service every entry of router is filed under; the account names the profile, the key and the config file. */
export const KEYCHAIN_SERVICE = 'router-cli';

/** A keychain that cannot be used: none on this machine, locked, or refusing. */
export class KeychainError extends Error {
  override name = 'KeychainError';
}

/** What the keychain is called where router runs. */
export function keychainName(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return 'the macOS Keychain';
  if (platform === 'win32') return 'the Windows Credential Manager';
  return 'the Secret Service keyring';
}

/** The keychain is turned off (ROUTER_KEYCHAIN=off, 0, no or false): keys go to the file. */
export function keychainOff(env: NodeJS.ProcessEnv): boolean {
  const v = env.ROUTER_KEYCHAIN;
  return !isBlank(v) && ['off', '0', 'no', 'false'].includes(v.trim().toLowerCase());
}

/** The account of a key: its profile and field, and the config file, so that two config folders never share one. */
export function keychainAccount(profile: string, field: string, configPath: string): string {
  return `${profile}/${field} (${configPath})`;
}

type Entry = import('@napi-rs/keyring').AsyncEntry;

/**
 * The entry in this process, or undefined where the call goes to a child of `env` (./keychain-child.ts): on Linux, when
 * `env` names another D-Bus session than this process's (the one the binding reads). A session that does not answer is refused first.
 */
async function entry(account: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<Entry | undefined> {
  if (process.platform === 'linux') {
    const silent = await busSilence(env.DBUS_SESSION_BUS_ADDRESS, signal);
    if (silent) throw new KeychainError(silent);
    signal?.throwIfAborted();
    if (env.DBUS_SESSION_BUS_ADDRESS !== process.env.DBUS_SESSION_BUS_ADDRESS) return undefined;
  }
  let binding: typeof import('@napi-rs/keyring');
  try {
    binding = await import('@napi-rs/keyring');
  } catch (err) {
    throw new KeychainError(`the keychain binding (@napi-rs/keyring) cannot be loaded here: ${firstLine(err)}`);
  }
  try {
    // Secret Service only: the library's fallback on Linux, the kernel keyring, forgets keys at each reboot.
    return new binding.AsyncEntry(KEYCHAIN_SERVICE, account, { linux: { store: 'secret-service' } });
  } catch (err) {
    throw new KeychainError(why(err));
  }
}

/** `call` on the entry of `account`, in this process or a child of `env`; the binding's failure as a KeychainError saying why. */
async function onEntry<T>(account: string, env: NodeJS.ProcessEnv, signal: AbortSignal | undefined, call: KeychainCall, here: (e: Entry) => Promise<T>): Promise<T> {
  const e = await entry(account, env, signal);
  try {
    if (e) return await here(e);
    return (await (await import('./keychain-child.js')).keychainInChild(KEYCHAIN_SERVICE, account, call, env, signal)) as T;
  } catch (err) {
    // Stopped: the signal's reason, as a key command stopped rejects (./key-command.ts).
    if (signal?.aborted) throw signal.reason;
    throw new KeychainError(why(err));
  }
}

/** Stores `secret` under `account`, on the keychain `env` names; a KeychainError says why it could not. */
export async function keychainSet(account: string, secret: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<void> {
  await onEntry(account, env, signal, { op: 'set', secret }, (e) => e.setPassword(secret, signal));
}

/** The secret under `account`, or undefined when there is none. */
export async function keychainGet(account: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string | undefined> {
  return (await onEntry<string | null | undefined>(account, env, signal, { op: 'get' }, (e) => e.getPassword(signal))) ?? undefined;
}

/** Removes the entry; false when there was none. */
export async function keychainDelete(account: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<boolean> {
  return onEntry(account, env, signal, { op: 'delete' }, (e) => e.deleteCredential(signal));
}

/**
 * Why the keychain cannot be used, on one line, in words a user can act on: the D-Bus library's and the
 * Secret Service's own messages ("Using X11 for dbus-daemon autolaunch was disabled…", "no result found")
 * say where to look only to who knows D-Bus. Their text follows in quotes.
 */
function why(err: unknown): string {
  let e = err as { cause?: unknown; message?: string } | undefined;
  while (e && typeof e === 'object' && e.cause && (e.cause as { message?: string }).message) e = e.cause as typeof e;
  const text = firstLine(e);
  if (/autolaunch|set your DBUS_SESSION_BUS_ADDRESS/i.test(text)) return 'no D-Bus session: DBUS_SESSION_BUS_ADDRESS is not set';
  if (/Failed to connect to socket/i.test(text)) return `no D-Bus session at DBUS_SESSION_BUS_ADDRESS ("${text}")`;
  if (/org\.freedesktop\.secrets|ServiceUnknown|was not provided by any \.service files/i.test(text)) {
    return `no Secret Service on this D-Bus session: no gnome-keyring or KeePassXC answers there ("${text}")`;
  }
  // gnome-keyring started by D-Bus with no login keyring made or unlocked (a session without a desktop login).
  if (/no result found/i.test(text)) return `the Secret Service has no default keyring unlocked ("${text}"): a desktop login unlocks one; else printf PASSWORD | gnome-keyring-daemon --unlock`;
  return text;
}

function firstLine(err: unknown): string {
  const message = (err as { message?: unknown } | undefined)?.message;
  const text = typeof message === 'string' ? message : String(err);
  const line = (text.split('\n')[0] ?? '').replace(/[\x00-\x1f\x7f]/g, ' ');
  return line.length > 300 ? `${firstWholeWords(line, 300)}…` : line;
}
