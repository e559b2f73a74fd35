import type { Command } from './commander.js';
import { reportError } from './errors.js';
import { IO, type GlobalFlags } from './io.js';

export interface RunContext<O> {
  io: IO;
  flags: GlobalFlags;
  opts: O;
  cmd: Command;
  /** Aborted on Ctrl-C. */
  signal: AbortSignal;
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
    const flags = cmd.optsWithGlobals() as GlobalFlags;
    const io = new IO(flags);
    const controller = new AbortController();
    const onSigint = () => controller.abort(Object.assign(new Error('interrupted'), { name: 'AbortError' }));
    process.once('SIGINT', onSigint);
    try {
      await fn({ io, flags, opts, cmd, signal: controller.signal }, ...args);
    } catch (err) {
      process.exitCode = reportError(controller.signal.aborted ? controller.signal.reason : err, io);
    } finally {
      process.removeListener('SIGINT', onSigint);
    }
  };
}

/** Reads all of stdin as text (for prompts and keys piped in). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
