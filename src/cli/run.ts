import type { Command } from './commander.js';
import { IO, processStreams, type GlobalFlags, type Streams } from './io.js';
import type { Connected, ConnectOptions } from './context.js';

/** What a run of `router` gets from outside: streams, environment, arguments; tests pass their own. */
export interface Runtime {
  streams: Streams;
  /** The user's arguments (without node and the script). */
  argv: string[];
  /** The client factory; the default builds one from flags > env > profile. */
  connect?: (io: IO, flags: GlobalFlags, opts?: ConnectOptions) => Promise<Connected>;
  exitCode: number;
  /** Registered by `main`: takes Ctrl-C away from the default (kill) while a command runs. */
  interrupts: boolean;
  /** Commands under way: the process must not end quietly while one is. */
  running?: number;
  /** The whole command tree (for completions), from `main` without importing it. */
  fullProgram?: () => Promise<Command>;
}

export interface RunContext<O> {
  io: IO;
  flags: GlobalFlags;
  opts: O;
  cmd: Command;
  /** The user's arguments as typed, for options whose order matters. */
  argv: string[];
  env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
  /** Builds the client; call it only after the command's own input is checked. */
  connect(opts?: ConnectOptions): Promise<Connected>;
}

const runtimes = new WeakMap<Command, Runtime>();

export function attachRuntime(program: Command, runtime: Runtime): void {
  runtimes.set(program, runtime);
}

export function runtimeOf(cmd: Command): Runtime {
  let root = cmd;
  while (root.parent) root = root.parent;
  return runtimes.get(root) ?? { streams: processStreams(), argv: process.argv.slice(2), exitCode: 0, interrupts: false };
}

export function interrupted(): Error {
  return Object.assign(new Error('interrupted'), { name: 'AbortError' });
}

/**
 * Wraps a command implementation: builds the IO from the global flags, turns Ctrl-C into an abort,
 * and turns any failure into one `error:` line and the table's exit code.
 */
export function action<O, A extends unknown[] = []>(fn: (ctx: RunContext<O>, ...args: A) => Promise<void>) {
  return async (...raw: unknown[]): Promise<void> => {
    const cmd = raw[raw.length - 1] as Command;
    const opts = raw[raw.length - 2] as O;
    const args = raw.slice(0, -2) as A;
    const runtime = runtimeOf(cmd);
    const flags = cmd.optsWithGlobals() as GlobalFlags;
    const io = new IO(flags, runtime.streams);
    const controller = new AbortController();
    const onSigint = () => controller.abort(interrupted());
    if (runtime.interrupts) process.on('SIGINT', onSigint);
    const connect = async (o?: ConnectOptions) => {
      if (runtime.connect) return runtime.connect(io, flags, o);
      return (await import('./context.js')).connect(io, flags, o);
    };
    runtime.running = (runtime.running ?? 0) + 1;
    try {
      await fn({ io, flags, opts, cmd, argv: runtime.argv, env: runtime.streams.env, signal: controller.signal, connect }, ...args);
    } catch (err) {
      const { reportError } = await import('./errors.js');
      runtime.exitCode = reportError(controller.signal.aborted ? controller.signal.reason : err, io);
    } finally {
      runtime.running!--;
      if (runtime.interrupts) process.removeListener('SIGINT', onSigint);
    }
  };
}

/** Reads all of a stream (stdin) as text, for prompts and keys piped in. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
