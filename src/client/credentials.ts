/**
 * The credentials each client's core sends (its key, an authorization header of its own): what the
 * kit keeps from the environments of the tools a prompt runs. Never printed, never passed on.
 */

const sent = new WeakMap<object, string[]>();

/** The `authorization` header among headers a program gave, whatever its case. */
export function authorizationOf(headers: Record<string, string | undefined> | undefined): string | undefined {
  return Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
}

export function noteCredentials(core: object, apiKey: string | undefined, headers: Record<string, string>): void {
  const authorization = authorizationOf(headers);
  sent.set(core, [apiKey, authorization?.replace(/^Bearer\s+/i, '')].filter((s): s is string => !!s));
}

export function credentialsOf(core: object): string[] {
  return sent.get(core) ?? [];
}
