import { afterAll, beforeAll } from 'vitest';

/**
 * What `start` makes (an emulator's environment, say), started before the tests of the file, or of the
 * describe block this is called in, and closed after them. The value returned stands for it: its members
 * are the started one's, read in hooks and tests (read before it started, it throws).
 */
export function startedForAll<T extends { close(): unknown }>(start: () => Promise<T>): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as T, {
    get(_, key) {
      if (!started) throw new Error(`read ${String(key)} of what startedForAll starts before it started`);
      const value: unknown = Reflect.get(started, key);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}
