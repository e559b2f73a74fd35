/** The set-up of the `router batch` tests run against one flavour of the emulator: its env, where it keeps batches, input files. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach } from 'vitest';
import { startCliEnv } from './cli-env.js';
import { batchesPathOf, type FLAVORS } from './batch-jobs.js';
import { startedForAll } from './for-all.js';

/** One request line of a batch input file: custom_id `id`, one user message `content`, and `extra` body fields. */
export const requestLine = (id: string, content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content }], ...extra } });

/** A CLI env on the `flavor` emulator, started for the enclosing describe block, its request log cleared before each test. */
export function batchCliEnv(flavor: (typeof FLAVORS)[number]) {
  const t = startedForAll(() => startCliEnv({ flavor }));
  beforeEach(() => t.clearRequests());
  const BP = batchesPathOf(flavor);
  return {
    t,
    /** Where the flavour keeps batches. */
    BP,
    /** Writes `lines` to `name` in the env's folder; its path. */
    file(name: string, lines: string[]): string {
      const p = join(t.dir, name);
      writeFileSync(p, lines.join('\n') + '\n');
      return p;
    },
    /** The batch creates the emulator was sent. */
    batchPosts: () => t.requests().filter((r) => r.path === BP && r.method === 'POST'),
  };
}
