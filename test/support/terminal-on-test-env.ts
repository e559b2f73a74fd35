// A file's own test env (an emulator, a config and state folder) with real terminals (tmux) on it: the env
// starts before the file's tests and, with the terminal last opened, closes after them.
import { afterAll, beforeAll } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers.js';
import { Terminal } from './tmux.js';

export interface TerminalOnTestEnv {
  /** The file's env (started in beforeAll). */
  readonly t: TestEnv;
  /** A new terminal with the env's variables (and `env` over them); the one opened before it is closed first. */
  open(env?: Record<string, string>): Promise<Terminal>;
}

/** Call at a test file's top level: registers the beforeAll/afterAll that start and close the env and its terminal. */
export function terminalOnTestEnv(): TerminalOnTestEnv {
  let t: TestEnv | undefined;
  let term: Terminal | undefined;
  beforeAll(async () => {
    t = await startTestEnv();
  });
  afterAll(async () => {
    await term?.close();
    await t?.close();
  });
  return {
    get t() {
      if (!t) throw new Error('the test env starts in beforeAll: read it inside a test or hook');
      return t;
    },
    async open(env = {}) {
      await term?.close();
      term = undefined;
      term = new Terminal({ ...this.t.env, ...env });
      return term;
    },
  };
}
