import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCliEnv, type CliEnv } from './support/cli-env.js';
import { waitBound } from './support/until.js';

export const BIN = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', 'bin', 'router.cjs');

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

/** Spawns the real `bin/router.cjs` with stdin closed (or fed `input`). */
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
    child.stderr!.on('data', (c) => err.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? waitBound());
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

export interface TestEnv extends Omit<CliEnv, 'run'> {
  /** Runs the built binary against the emulator, with the environment below. */
  run(args: string[], opts?: RunOptions): Promise<RunResult>;
  /** Spawns the CLI and returns the child, for signals. */
  spawn(args: string[], env?: Record<string, string>): ReturnType<typeof spawn>;
}

/**
 * The environment of test/support/cli-env.ts (an emulator in this process on a fresh folder, its
 * keys, a private config and state folder), with `router ARGS` run by the built binary.
 */
export async function startTestEnv(opts: Parameters<typeof startCliEnv>[0] = {}): Promise<TestEnv> {
  const t = await startCliEnv(opts);
  return Object.assign(t, {
    run: (args: string[], o: RunOptions = {}) => runCli(args, { ...o, env: { ...t.env, ...o.env } }),
    spawn: (args: string[], extraEnv: Record<string, string> = {}) => spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...t.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] }),
  });
}

export { post } from './support/post.js';
