/**
 * The credentials this process's clients send (a key, an authorization header of their own, any header whose name says
 * it holds a secret: `x-api-key`, a gateway's `x-portkey-api-key`): what the kit keeps from the environments of tools
 * and what a client's errors hide (a call's errors, its own headers' too). Never printed, never passed on.
 */
import { hideable } from '../internal/hide-secrets.js';
import { isSecretHeader } from '../internal/secret-headers.js';
import { sentInTheClear } from '../internal/api-root.js';

const sent = new WeakMap<object, string[]>();

/** How many of this process's clients (those not yet collected) send each credential: a program may hold several. */
const inUse = new Map<string, number>();
const collected = new FinalizationRegistry<string[]>((credentials) => {
  for (const c of credentials) {
    const n = (inUse.get(c) ?? 1) - 1;
    if (n) inUse.set(c, n);
    else inUse.delete(c);
  }
});

/** The `authorization` header among headers a program gave, whatever its case. */
export function authorizationOf(headers: Record<string, string | undefined> | undefined): string | undefined {
  return Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
}

/**
 * The secrets `headers` carry, by the one rule of which headers hold one (isSecretHeader, as the emulator's log and the
 * cassettes keep them out): each such header's value, less its scheme (`Bearer `, `Basic `), 8 characters or more.
 */
export function credentialsIn(headers: Record<string, string | undefined> | undefined): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined || !isSecretHeader(name)) continue;
    const credential = value.trim().replace(/^[A-Za-z][\w.+-]*\s+(?=\S+$)/, '');
    if (hideable(credential) && !out.includes(credential)) out.push(credential);
  }
  return out;
}

/** Notes what `core` sends: its key and the secrets of its own headers. */
export function noteCredentials(core: object, apiKey: string | undefined, headers: Record<string, string | undefined> | undefined): void {
  const credentials = [...new Set([apiKey, ...credentialsIn(headers)])].filter((s): s is string => !!s);
  sent.set(core, credentials);
  for (const c of credentials) inUse.set(c, (inUse.get(c) ?? 0) + 1);
  if (credentials.length) collected.register(core, credentials);
}

/** What every client of this process sends (closed or not, until it is collected): a tool is given none of them. */
export function credentialsInUse(): string[] {
  return [...inUse.keys()];
}

/** What one client sends (its errors hide it). */
export function credentialsOf(core: object): string[] {
  return sent.get(core) ?? [];
}

/**
 * What one call of `core` sends: the client's credentials and those of the call's own headers, hidden in that call's
 * errors. Not noted beside the client's: a program that sends each call with another user's key would have them pile up.
 */
export function callCredentials(core: object, headers: Record<string, string | undefined> | undefined): string[] {
  const own = credentialsOf(core);
  const call = headers ? credentialsIn(headers).filter((c) => !own.includes(c)) : [];
  return call.length ? [...own, ...call] : own;
}

/** What a client tells once, when it first sends its credentials over plain http:// to a host not this machine. */
export interface PlainHttpInfo {
  /** The host the credentials went to, unencrypted. */
  host: string;
  /**
   * An MCP server's URL whose query holds a credential (a parameter named as isSecretHeader names a header,
   * `token`, `api_key`, `access_token`, or `sig`): what of the URL goes readable, `password` and `?name=` each.
   */
  inUrl?: string[] | undefined;
}

export interface PlainHttpOption {
  /** Told once per client, on the first call that sends a key over plain http:// to a host not this machine (never for loopback). */
  onPlainHttp?: ((info: PlainHttpInfo) => void) | undefined;
}

/** A teller that calls `tell` the first time credentials go to a URL that sends them in the clear, then never again. */
export function plainHttpOnce(tell: PlainHttpOption['onPlainHttp']): (url: string, credentialed: boolean) => void {
  let told = !tell;
  return (url, credentialed) => {
    if (told || !credentialed || !sentInTheClear(new URL(url))) return;
    told = true;
    tell!({ host: new URL(url).host });
  };
}
