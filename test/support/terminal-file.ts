import { afterAll, beforeAll } from 'vitest';
import { BIN, startTestEnv, type TestEnv } from '../helpers.js';
import { Terminal } from './tmux.js';

/** The command line that runs this checkout's router in a terminal's shell. */
export const ROUTER = `node ${BIN}`;

/**
 * For a file whose tests drive `router` on a terminal against one emulator: starts the emulator before the file's
 * tests (handed to `started`) and, after them, closes the last terminal and then the emulator. Gives `terminal(env)`,
 * which closes the terminal before it (and waits for its shell to end) and opens one on the emulator's environment
 * with `env` over it.
 */
export function terminalsOnEmulator(started: (t: TestEnv) => void, options?: Parameters<typeof startTestEnv>[0]): (env?: Record<string, string>) => Promise<Terminal> {
  let t: TestEnv | undefined;
  let last: Terminal | undefined;
  beforeAll(async () => {
    t = await startTestEnv(options);
    started(t);
  });
  afterAll(async () => {
    await last?.close();
    await t?.close();
  });
  return async (env = {}) => {
    await last?.close();
    return (last = new Terminal({ ...t!.env, ...env }));
  };
}
