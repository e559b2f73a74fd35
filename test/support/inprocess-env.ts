import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { RouterClient } from '../../src/client/index.js';
import { startCliEnv } from './cli-env.js';
import { runInProcess, type InProcessOptions, type InProcessResult } from './inprocess.js';

export interface InProcessEnv {
  emu: Emulator;
  dir: string;
  apiKey: string;
  managementKey: string;
  /** `router ARGS` in this process against the emulator (both keys set). */
  run(args: string[], opts?: InProcessOptions): Promise<InProcessResult>;
  /** A raw HTTP call with a key (the API key unless told), answered as status and parsed JSON. */
  call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; json: any }>;
  /** An emulator-only route, with the operator key (credits: the management key of `key`'s workspace). */
  admin(path: string, body: unknown, key?: string): Promise<any>;
  close(): Promise<void>;
}

/** The emulator of startCliEnv, with `router ARGS` run through testStreams (terminal facts as asked, both keys set). */
export async function startInProcessEnv(opts: { flavor?: 'spec' | 'deployed' } = {}): Promise<InProcessEnv> {
  const t = await startCliEnv(opts);
  const env = { ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey };
  const call = async (method: string, path: string, body?: unknown, key = t.apiKey) => {
    const res = await fetch(`${t.apiRoot}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json };
  };
  return {
    emu: t.emu,
    dir: t.dir,
    apiKey: t.apiKey,
    managementKey: t.managementKey,
    run: (args, o = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } }),
    call,
    admin: async (path, body, key = t.operatorKey) => (await call('POST', `/_emulator/${path}`, body, key)).json,
    close: () => t.close(),
  };
}

/** What `emulatorPerFile` gives each test file: its emulator, a temp folder, and the environment of a fresh user. */
export interface FileEmulator {
  emu: Emulator;
  dir: string;
  env: Record<string, string>;
}

/**
 * Registers the hooks of a test file that shares one in-process emulator among its tests: started in
 * a fresh temp folder before them (the ROUTER_* settings a user may have set blanked), closed and
 * removed after. `set` receives it once it is up; `env` (or what it gives for the folder) goes over its environment.
 */
export function emulatorPerFile(prefix: string, set: (f: FileEmulator) => void, env: Record<string, string> | ((dir: string) => Record<string, string>) = {}): void {
  let file: FileEmulator | undefined;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    const emu = await startEmulator({ stateDir: join(dir, 'emu'), port: 0, batchDelayMs: 0 });
    const { apiKey, managementKey } = emu.store.firstKeys();
    const blank = { ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_VOICE: '', ROUTER_SPEECH_MODEL: '', ROUTER_EMBED_MODEL: '', ROUTER_NO_LOG: '', ROUTER_DAILY_BUDGET: '', ROUTER_MONTHLY_BUDGET: '' };
    file = { emu, dir, env: { ...blank, ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: managementKey, ROUTER_CONFIG_DIR: join(dir, 'config'), ...(typeof env === 'function' ? env(dir) : env) } };
    set(file);
  });
  afterAll(async () => {
    await file?.emu.close();
    if (file) rmSync(file.dir, { recursive: true, force: true });
  });
}

export interface KitTest extends FileEmulator {
  /** A fresh state folder of this test's own. */
  stateDir: string;
  /** A client on the emulator with its key, closed after the test. */
  client: RouterClient;
}

/** emulatorPerFile for a kit test file: each test also gets a state folder of its own and a client. */
export function kitPerTest(prefix: string, set: (f: KitTest) => void): void {
  let file: FileEmulator;
  let client: RouterClient | undefined;
  emulatorPerFile(prefix, (f) => (file = f));
  beforeEach(() => {
    const stateDir = join(file.dir, `state-${Math.random().toString(36).slice(2)}`);
    mkdirSync(stateDir);
    client = new RouterClient({ apiKey: file.env.ROUTER_API_KEY, apiRoot: file.emu.apiRoot });
    set({ ...file, stateDir, client });
  });
  afterEach(() => client?.close());
}
