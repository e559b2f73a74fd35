// A test file's emulator with real terminals (tmux) on it: opened on the emulator's environment, closed
// (the terminal, then the emulator) after the file's tests.
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

/**
 * For a file whose tests share one terminal on one emulator (started with `options`, handed to `started`): after the
 * file's tests, the terminal `current()` gives is closed, then the emulator.
 */
export function emulatorWithTerminal(options: Parameters<typeof startTestEnv>[0], started: (t: TestEnv) => void, current: () => Terminal | undefined): void {
  let t: TestEnv | undefined;
  beforeAll(async () => {
    t = await startTestEnv(options);
    started(t);
  });
  afterAll(async () => {
    await current()?.close();
    await t?.close();
  });
}

/** Closes `previous` (not waiting for its shell) and opens a terminal on `t`'s environment with its management key. */
export function reopened(previous: Terminal | undefined, t: TestEnv): Terminal {
  void previous?.close();
  return new Terminal({ ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey });
}
