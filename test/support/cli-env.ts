import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { startEmulator, type Emulator, type Flavor } from '../../src/emulator/server.js';

// vitest's hooks and expect, only under vitest: `npm run conformance` (test/conformance/report.ts) starts
// this environment with tsx, where importing vitest throws.
const vitest = process.env.VITEST ? await import('vitest') : undefined;
const underVitest = () => {
  if (!vitest) throw new Error('this helper runs under vitest only');
  return vitest;
};

/**
 * The in-process twin of test/helpers.ts `startTestEnv`: the same emulator, environment and
 * checks, with `router ARGS` run by `main()` in this process instead of a spawned binary. A test
 * moved from test/e2e keeps every assertion and changes only its import.
 */

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

export interface CliRunOptions {
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  /** The working folder of this one run (process.chdir and back: the forks pool allows it). */
  cwd?: string;
}

export const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(node:.+\))$/m;

/** `main()` in this process, at `cwd` (the folder is restored after), fed `input`, its stdout and stderr collected; no terminal. */
export async function captureMain(args: string[], io: { input: Buffer; env: NodeJS.ProcessEnv; cwd?: string; terminal?: number }): Promise<{ code: number; out: Buffer; err: Buffer }> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  // `terminal`: stdout and stderr taken as a terminal of that many columns (gh's iostreams.Test()).
  const stdout = Object.assign(new PassThrough(), { columns: io.terminal ?? 80 });
  const stderr = Object.assign(new PassThrough(), io.terminal === undefined ? {} : { columns: io.terminal });
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => err.push(c));
  // Loaded on first use: the spawned tests' environment (test/helpers.ts) is this one, without main().
  const { main } = await import('../../src/cli/main.js');
  const home = process.cwd();
  let code: number;
  try {
    if (io.cwd) process.chdir(io.cwd);
    code = await main(['node', 'router', ...args], { stdin: Readable.from([io.input]), stdout, stderr, env: io.env, tty: { stdin: false, stdout: io.terminal !== undefined, stderr: io.terminal !== undefined } });
    await new Promise((r) => setImmediate(r));
  } finally {
    process.chdir(home);
  }
  return { code, out: Buffer.concat(out), err: Buffer.concat(err) };
}

/** `router ARGS` in this process with stdin fed `input`, stdout and stderr collected, no terminal. */
export async function runCliInProcess(args: string[], opts: CliRunOptions = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries({ ...process.env, FORCE_COLOR: undefined, ...opts.env })) if (v !== undefined) env[k] = v;
  const { code, out, err } = await captureMain(args, { input: Buffer.from(opts.input ?? ''), env, cwd: opts.cwd });
  const stdoutBytes = out;
  const stderrText = err.toString('utf8');
  // The checks runCli makes on every spawned run: no key printed, no stack trace, no Node warning.
  const printed = stdoutBytes.toString('latin1') + err.toString('latin1');
  for (const key of [env.ROUTER_API_KEY, env.ROUTER_MANAGEMENT_KEY]) {
    if (key && key.length >= 12 && printed.includes(key)) throw new Error(`router ${args.join(' ')} printed a key`);
  }
  if (STACK_FRAME.test(stderrText) || /Warning:/.test(stderrText)) throw new Error(`router ${args.join(' ')} printed a stack trace or a warning:\n${stderrText}`);
  return { code, stdout: stdoutBytes.toString('utf8'), stderr: stderrText, stdoutBytes };
}

export interface CliEnv {
  emu: Emulator;
  apiRoot: string;
  apiKey: string;
  managementKey: string;
  operatorKey: string;
  dir: string;
  env: Record<string, string>;
  run(args: string[], opts?: CliRunOptions): Promise<CliResult>;
  requests(): { method: string; path: string; headers: Record<string, string>; body: any; query: Record<string, string[]> }[];
  clearRequests(): void;
  admin(path: string, body?: unknown, method?: string): Promise<any>;
  close(): Promise<void>;
  /** Closes the emulator and starts it again on its port and folder; `down`, if given, is awaited in between (while nothing listens). */
  restart(opts?: { down?: () => Promise<unknown> }): Promise<void>;
}

/** An emulator in this process on a fresh folder, with the environment test/helpers.ts gives the binary. */
export async function startCliEnv(opts: { faults?: string[]; batchDelayMs?: number; flavor?: Flavor } = {}): Promise<CliEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'router-cli-'));
  const start = (port: number) => startEmulator({ stateDir: join(dir, 'state'), port, faults: opts.faults, batchDelayMs: opts.batchDelayMs ?? 0, flavor: opts.flavor });
  let emu = await start(0);
  const { apiKey, managementKey } = emu.store.firstKeys();
  const operatorKey = emu.store.operatorKey();
  const env: Record<string, string> = {
    ROUTER_API_ROOT: emu.apiRoot,
    ROUTER_API_KEY: apiKey,
    // Keys the tests save go to their config files, never to the keychain of the machine (docs/keys.md).
    ROUTER_KEYCHAIN: 'off',
    ROUTER_CONFIG_DIR: join(dir, 'config'),
    ROUTER_STATE_DIR: join(dir, 'cli-state'),
    // Code caches the launcher keeps (a call under other V8 flags, --jitless): this env's own, so one
    // test's never changes how another's call starts (bin/router.cjs reads its own before the build's).
    XDG_CACHE_HOME: join(dir, 'cache'),
    ROUTER_PROFILE: '',
    ROUTER_MANAGEMENT_KEY: '',
    ROUTER_MODEL: '',
    ROUTER_VOICE: '',
    ROUTER_SPEECH_MODEL: '',
    ROUTER_EMBED_MODEL: '',
    NO_COLOR: '',
  };
  const t: CliEnv = {
    emu,
    apiRoot: emu.apiRoot,
    apiKey,
    managementKey,
    operatorKey,
    dir,
    env,
    run: (args, o = {}) => runCliInProcess(args, { ...o, env: { ...env, ...o.env } }),
    requests: () => t.emu.requestLog as any[],
    clearRequests: () => {
      t.emu.clearRequestLog();
    },
    admin: async (path, body, method = body === undefined ? 'GET' : 'POST') => {
      const res = await fetch(`${t.emu.apiRoot}/_emulator/${path}`, {
        method,
        headers: { authorization: `Bearer ${path === 'credits' ? managementKey : operatorKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res.json();
    },
    close: async () => {
      await t.emu.close();
      // A child of a test may still be writing its last file as the folder goes (ENOTEMPTY): tried again.
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    },
    restart: async ({ down } = {}) => {
      const port = t.emu.port;
      await t.emu.close();
      await down?.();
      emu = await start(port);
      t.emu = emu;
    },
  };
  return t;
}

/** A CliEnv holding one finished batch of two local/echo requests: the requests file and the batch id. */
export async function startCliEnvWithBatch(): Promise<{ t: CliEnv; requests: string; batchId: string }> {
  const t = await startCliEnv();
  const requests = join(t.dir, 'requests.jsonl');
  writeFileSync(requests, ['a', 'b'].map((c) => JSON.stringify({ custom_id: c, body: { model: 'local/echo', messages: [{ role: 'user', content: c }] } })).join('\n'));
  const batchId = (await t.run(['batch', 'create', requests])).stdout.trim();
  underVitest().expect((await t.run(['batch', 'get', batchId, '--watch', '--interval', '0.05'])).code).toBe(0);
  return { t, requests, batchId };
}

export { post } from './post.js';

/**
 * The hooks of a test file whose tests share one CliEnv: started before them (`set` receives it), its request
 * log cleared before each, closed after them. The function returned lists the requests to `path` since.
 */
export function sharedCliEnv(set: (t: CliEnv) => void): (path: string) => any[] {
  const { afterAll, beforeAll, beforeEach } = underVitest();
  let t: CliEnv;
  beforeAll(async () => {
    t = await startCliEnv();
    set(t);
  });
  afterAll(() => t.close());
  beforeEach(() => t.clearRequests());
  return (path) => t.requests().filter((r) => r.path === path);
}

/**
 * The hooks of a test file whose tests share one CliEnv: started before them, with faults and the
 * request log cleared before each; after them, no key in anything a run printed, and closed. `set`
 * receives the environment; the function returned runs the CLI and keeps what it printed.
 */
export function cliEnvPerFile(set: (t: CliEnv) => void, opts: Parameters<typeof startCliEnv>[0] = {}): (args: string[], env?: Record<string, string>, input?: string) => Promise<CliResult> {
  const { afterAll, beforeAll, beforeEach, expect } = underVitest();
  let t: CliEnv;
  const outputs: CliResult[] = [];
  beforeAll(async () => {
    t = await startCliEnv(opts);
    set(t);
  });
  afterAll(async () => {
    for (const r of outputs) {
      for (const key of [t.apiKey, t.managementKey]) {
        expect(r.stdout).not.toContain(key);
        expect(r.stderr).not.toContain(key);
      }
    }
    await t.close();
  });
  beforeEach(async () => {
    t.clearRequests();
    await t.admin('faults', { faults: [] });
  });
  return async (args, env = {}, input) => {
    const r = await t.run(args, { env, input });
    outputs.push(r);
    return r;
  };
}
