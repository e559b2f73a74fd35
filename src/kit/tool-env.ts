/**
 * The environment a tool command or an MCP server starts with: the caller's, without router's keys.
 * A model that runs `env` must not be sent them.
 */

import { credentialsInUse } from '../client/credentials.js';
import { hideable } from '../internal/hide-secrets.js';
import { KEY_ENV } from '../config/fields.js';

/** Environment variables router reads a key from. */
const KEY_ENV_VARS: string[] = Object.values(KEY_ENV);

/**
 * `env` without the key variables, and without any variable whose value holds one of `secrets` or a key
 * a client of this process sends (the keys in use, wherever they came from: a copy in another variable goes too).
 */
export function toolEnv(env: NodeJS.ProcessEnv, secrets: (string | undefined)[] = []): Record<string, string> {
  const keys = [...secrets, ...credentialsInUse()].filter(hideable);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || KEY_ENV_VARS.includes(name)) continue;
    if (keys.some((k) => value.includes(k))) continue;
    out[name] = value;
  }
  return out;
}
