import { vi } from 'vitest';
import type { CliEnv } from './cli-env.js';

/** `fn` run as if the clock were `ms` ahead (Date only: timers stay real), as a later `router usage --reconcile` would be. */
export async function later<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + ms });
  try {
    return await fn();
  } finally {
    vi.useRealTimers();
  }
}

/** What the service says `key` has spent (`GET /v1/key`). */
export const keyUsed = async (t: CliEnv, key: string): Promise<number> =>
  ((await (await fetch(`${t.apiRoot}/v1/key`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { usage: number } }).data.usage;
