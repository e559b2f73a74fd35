/**
 * The credentials this process's clients send (a key, an authorization header of their own, any header whose name says
 * it holds a secret: `x-api-key`, a gateway's `x-portkey-api-key`; a call's own too): what the kit keeps from the
 * environments of tools and what a client's errors hide. Never printed, never passed on.
 */
import { hideable } from '../internal/hide-secrets.js';
import { isSecretHeader } from '../internal/secret-headers.js';

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

/** Notes what `core` sends, its key and the secrets of `headers` (its own, or a call's), beside what it sent before. */
export function noteCredentials(core: object, apiKey: string | undefined, headers: Record<string, string | undefined> | undefined): void {
  let list = sent.get(core);
  const fresh = [...new Set([apiKey, ...credentialsIn(headers)])].filter((s): s is string => !!s && !list?.includes(s));
  if (!fresh.length) return;
  if (!list) {
    sent.set(core, (list = []));
    // The list itself is held: credentials a call notes later are let go with the client too.
    collected.register(core, list);
  }
  for (const c of fresh) {
    list.push(c);
    inUse.set(c, (inUse.get(c) ?? 0) + 1);
  }
}

/** What every client of this process sends (closed or not, until it is collected): a tool is given none of them. */
export function credentialsInUse(): string[] {
  return [...inUse.keys()];
}

/** What one client sends (its errors hide it). */
export function credentialsOf(core: object): string[] {
  return sent.get(core) ?? [];
}
