/** A key checked against the service (login, auth status), and what the service says of it, in words. */
import type { KeyInfo, RouterClient } from '../../client/index.js';
import { CliError, EXIT } from '../exit-codes.js';
import { usdWritten } from '../../kit/spend/cost-bound.js';

export interface KeyCheck {
  /** The call that accepted the key. */
  route: 'GET /v1/key' | 'GET /v1/batches';
  /** What the service says of the key; absent where it has no GET /v1/key. */
  info?: KeyInfo;
}

/**
 * Checks a key with the call the service has for exactly that (`GET /v1/key`: label, usage,
 * limits) or, where that route is absent (404), a one-item batch listing (api.md names no key
 * route). A refused key (401, 403) is exit 3 either way; `outcome` ends that line.
 */
export async function checkKey(client: RouterClient, outcome = ''): Promise<KeyCheck> {
  const { APIError } = await import('../../client/index.js');
  try {
    try {
      return { route: 'GET /v1/key', info: await client.key.get() };
    } catch (err) {
      if (!(err instanceof APIError && err.status === 404)) throw err;
      await client.batches.list({ limit: 1 });
      return { route: 'GET /v1/batches' };
    }
  } catch (err) {
    if (err instanceof APIError && (err.status === 401 || err.status === 403)) {
      throw new CliError(`${client.core.apiRoot} refused the key (${err.status})${outcome}`, EXIT.AUTH);
    }
    throw err;
  }
}

/** USD as a person writes it: to the cent, or below a cent to its last digit (kit/spend/cost-bound.ts). */
export const dollars = usdWritten;

/** The key's spending limit, as a "limit" row shows it: none, or the limit, when it resets and what is left. */
export function limitText(info: KeyInfo): string {
  if (typeof info.limit !== 'number') return 'no spending limit';
  const left = typeof info.limit_remaining === 'number' ? `, ${dollars(info.limit_remaining)} left` : '';
  const reset = info.limit_reset ? ` (resets ${info.limit_reset})` : '';
  return `${dollars(info.limit)}${reset}${left}`;
}

/** One line on the key: its label, limit and usage. */
export function keySummary(info: KeyInfo): string {
  const kind = info.is_management_key ? 'management key' : 'key';
  const limit = typeof info.limit === 'number' ? `limit ${limitText(info)}` : limitText(info);
  return `${kind} ${info.label}: ${limit}, ${dollars(info.usage)} used`;
}
