import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator, type Emulator } from '../dist/emulator/server.js';

export const BIN = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', 'bin', 'router');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

export interface RunOptions {
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs?: number;
  /** Send stdout to this path (e.g. /dev/full) instead of a pipe. */
  stdoutPath?: string;
  /** Read stdin from this path (e.g. a folder) instead of a pipe. */
  stdinPath?: string;
}

export const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(node:.+\))$/m;

/** Spawns the real `bin/router` with stdin closed (or fed `input`). */
export function runCli(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const inherited = { ...process.env };
    delete inherited.FORCE_COLOR;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...inherited, ...opts.env })) if (v !== undefined) env[k] = v;
    const outFd = opts.stdoutPath ? openSync(opts.stdoutPath, 'w') : undefined;
    const inFd = opts.stdinPath ? openSync(opts.stdinPath, 'r') : undefined;
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd: opts.cwd, stdio: [inFd ?? 'pipe', outFd ?? 'pipe', 'pipe'] });
    for (const fd of [outFd, inFd]) if (fd !== undefined) closeSync(fd);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      // Key safety, checked on every run of every suite: no output may carry a key it was given.
      const printed = stdoutBytes.toString('latin1') + Buffer.concat(err).toString('latin1');
      for (const key of [env.ROUTER_API_KEY, env.ROUTER_MANAGEMENT_KEY]) {
        if (key && key.length >= 12 && printed.includes(key)) return reject(new Error(`router ${args.join(' ')} printed a key`));
      }
      // Never a stack trace, never a Node warning: checked on every run of every suite.
      const stderr = Buffer.concat(err).toString('utf8');
      if (STACK_FRAME.test(stderr) || /Warning:/.test(stderr)) return reject(new Error(`router ${args.join(' ')} printed a stack trace or a warning:\n${stderr}`));
      resolvePromise({ code, stdout: stdoutBytes.toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), stdoutBytes });
    });
    child.stdin?.on('error', () => {});
    child.stdin?.end(opts.input ?? '');
  });
}

export interface TestEnv {
  emu: Emulator;
  apiRoot: string;
  apiKey: string;
  managementKey: string;
  /** The emulator operator's key: every emulator-only route, server-wide. */
  operatorKey: string;
  dir: string;
  /** Environment for the CLI: emulator root and key, private config dir. */
  env: Record<string, string>;
  run(args: string[], opts?: RunOptions): Promise<RunResult>;
  requests(): { method: string; path: string; headers: Record<string, string>; body: any; query: Record<string, string[]> }[];
  clearRequests(): void;
  admin(path: string, body?: unknown, method?: string): Promise<any>;
  close(): Promise<void>;
  /** Stops the emulator and starts a new one on the same state folder and port. */
  restart(opts?: { downMs?: number }): Promise<void>;
  /** Spawns the CLI and returns the child, for signals. */
  spawn(args: string[], env?: Record<string, string>): ReturnType<typeof spawn>;
}

export async function startTestEnv(opts: { faults?: string[]; batchDelayMs?: number } = {}): Promise<TestEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'router-test-'));
  let emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, faults: opts.faults, batchDelayMs: opts.batchDelayMs ?? 0 });
  const { apiKey, managementKey } = emu.store.firstKeys();
  const operatorKey = emu.store.operatorKey();
  const env = {
    ROUTER_API_ROOT: emu.apiRoot,
    ROUTER_API_KEY: apiKey,
    ROUTER_CONFIG_DIR: join(dir, 'config'),
    ROUTER_STATE_DIR: join(dir, 'cli-state'),
    ROUTER_PROFILE: '',
    ROUTER_MANAGEMENT_KEY: '',
    ROUTER_MODEL: '',
    ROUTER_VOICE: '',
    ROUTER_SPEECH_MODEL: '',
    ROUTER_EMBED_MODEL: '',
    NO_COLOR: '',
  };
  const admin = async (path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') => {
    const res = await fetch(`${emu.apiRoot}/_emulator/${path}`, {
      method,
      headers: { authorization: `Bearer ${path === 'credits' ? managementKey : operatorKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.json();
  };
  const t: TestEnv = {
    emu,
    apiRoot: emu.apiRoot,
    apiKey,
    managementKey,
    operatorKey,
    dir,
    env,
    run: (args, o = {}) => runCli(args, { ...o, env: { ...env, ...o.env } }),
    requests: () => t.emu.requestLog as any[],
    clearRequests: () => {
      const l = t.emu.requestLog;
      if (l) l.length = 0;
    },
    admin,
    close: async () => {
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
    },
    restart: async ({ downMs = 0 } = {}) => {
      const port = emu.port;
      await emu.close();
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      emu = await startEmulator({ stateDir: join(dir, 'state'), port, faults: opts.faults, batchDelayMs: opts.batchDelayMs ?? 0 });
      t.emu = emu;
    },
    spawn: (args, extraEnv = {}) => {
      const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
      return child;
    },
  };
  return t;
}

export { post } from './support/post.js';
