/** What the real process does with a failure no command handled: one line and an exit code, never a stack trace. */
import { EXIT } from './exit-codes.js';
import type { Runtime } from './run.js';
import { IO, type Streams } from './io/io.js';
import { exitSoFar } from './io/exit-so-far.js';
import { signalTaken } from './signals.js';

/** A failure outside any command's own handling: one line and its exit code. */
export async function report(err: unknown, streams: Streams): Promise<number> {
  const { reportError } = await import('./errors.js');
  return reportError(err, new IO({}, streams));
}

/**
 * The last-resort error path of the real process: a write to stdout that fails (a full disk, a
 * closed pipe) or anything thrown outside a command becomes one line and an exit code, never a
 * stack trace.
 */
export function installLastResort(runtime: Runtime): void {
  let failing = false;
  const fail = async (err: unknown) => {
    // Once: a stream that fails keeps failing (each write to a full disk is one more error event).
    if (failing) return;
    failing = true;
    process.exitCode = await report(err, runtime.streams);
    process.exit();
  };
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    // A closed pipe (router chat | head -1) is not an error of ours; an id it did not take is still said.
    if (err.code === 'EPIPE') {
      const made = new IO({}, runtime.streams).madeSoFar;
      if (made.length) runtime.streams.stderr.write(`${made.join('\n')}\n`);
      process.exit(runtime.exitCode || exitSoFar(runtime.streams.stdout));
    }
    void fail(Object.assign(err, { path: 'stdout' }));
  });
  // stderr that takes no more (its reader gone: `2>&1 | head -1`; a full disk: `2>/dev/full`): what is
  // left to say there is dropped and the command goes on to its own exit code. Exiting here lost the
  // work of a `batch run --results FILE`, ended a chat at a note said before its call, and made
  // `chat --usage … 2>/dev/full` exit 1 with its answer printed.
  process.stderr.on('error', () => {});
  // A plain kill, or the terminal closing, ends the run as Ctrl-C would, so that exit handlers remove
  // temp files and stop the tools run (serve has its own: takeSignal). Node dies of SIGHUP even under nohup.
  // Other listeners only watch: ora's signal-exit (which restores the cursor) would otherwise keep the run going.
  for (const [sig, code] of [['SIGTERM', EXIT.TERMINATED], ['SIGHUP', EXIT.HANGUP]] as const) {
    process.on(sig, () => {
      if (!signalTaken(sig)) process.exit(code);
    });
  }
  // No false success: a command whose work can no longer go on (nothing left to wake it) is a failure.
  // A listener of the same event may still end the command (a prompt whose input ran dry): given one more turn.
  let drained = false;
  process.on('beforeExit', () => {
    if ((runtime.running ?? 0) === 0) return;
    if (!drained) {
      drained = true;
      setImmediate(() => {});
      return;
    }
    void fail(new Error('router stopped before the command finished: nothing was left to wait on (this is a bug; please report it)'));
  });
  process.on('uncaughtException', (err) => void fail(err));
  process.on('unhandledRejection', (err) => void fail(err));
}
