/**
 * The credentials this process's clients send (a key, an authorization header of their own): what the
 * kit keeps from the environments of tools. Never printed, never passed on.
 */

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

export function noteCredentials(core: object, apiKey: string | undefined, headers: Record<string, string>): void {
  const authorization = authorizationOf(headers);
  const credentials = [apiKey, authorization?.replace(/^Bearer\s+/i, '')].filter((s): s is string => !!s);
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
