import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { runInProcess, type InProcessOptions } from './inprocess.js';

export interface User {
  home: string;
  env: Record<string, string>;
  run: (args: string[], o?: InProcessOptions) => ReturnType<typeof runInProcess>;
}

/**
 * The hooks of a test file whose tests are users of one emulator (in this process), each a fresh user:
 * a home folder with config and state folders of their own, and no ROUTER_* setting from outside.
 */
export function emulatorUsers(prefix: string): { readonly emu: Emulator; readonly dir: string; user(): User } {
  let emu: Emulator;
  let dir: string;
  let env: Record<string, string>;
  let n = 0;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    emu = await startEmulator({ stateDir: join(dir, 'emu'), port: 0, batchDelayMs: 0 });
    const { apiKey, managementKey } = emu.store.firstKeys();
    env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: managementKey, ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_VOICE: '', ROUTER_SPEECH_MODEL: '', ROUTER_EMBED_MODEL: '', ROUTER_NO_LOG: '' };
  });
  afterAll(async () => {
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get emu() {
      return emu;
    },
    get dir() {
      return dir;
    },
    user() {
      const home = join(dir, `u${++n}`);
      mkdirSync(home, { recursive: true });
      const own = { ...env, ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_STATE_DIR: join(home, 'state') };
      return { home, env: own, run: (args, o = {}) => runInProcess(args, { ...o, env: { ...own, ...o.env } }) };
    },
  };
}
