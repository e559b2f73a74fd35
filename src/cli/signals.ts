/** SIGTERM and SIGHUP: who ends the run on them (the last resort's exit, a running command's stop, serve's own). */
import { EXIT, type ExitCode } from './exit-codes.js';

/** The signal listeners of a command that handles the signal itself (serve's stop): the run is not ended for it. */
const taken = new WeakSet<object>();

/** Handles `sig` once with `handler` instead of ending the run (exit 143 or 129). */
export function takeSignal(sig: 'SIGTERM' | 'SIGHUP', handler: () => void): void {
  taken.add(handler);
  process.once(sig, handler);
}

/**
 * A running command's SIGTERM (`timeout`, `kill`): the command is stopped as Ctrl-C stops it (a watch
 * says how to resume, a cut answer is kept in the ledger), then exits 143; unless a command took
 * the signal for itself (serve's stop). A command still running a second later is ended there.
 * Returns the function that removes the handler.
 */
export function stopOnSigterm(stop: () => void): () => void {
  const handler = () => {
    if (signalTaken('SIGTERM', handler)) return;
    stop();
    setTimeout(() => process.exit(EXIT.TERMINATED), 1000).unref();
  };
  taken.add(handler);
  process.on('SIGTERM', handler);
  return () => process.removeListener('SIGTERM', handler);
}

/** Whether a listener other than `except` took `sig` for itself. */
export function signalTaken(sig: 'SIGTERM' | 'SIGHUP', except?: () => void): boolean {
  return process.listeners(sig).some((l) => l !== except && taken.has(l));
}

/** A running command's Ctrl-C: `stop` it, and the process dies of the signal (below). Returns the function that removes the handler. */
export function stopOnSigint(stop: () => void): () => void {
  const handler = () => {
    dieOfSigintAtExit();
    stop();
  };
  running++;
  process.on('SIGINT', handler);
  // Never removed: with no listener left node closes its watcher, and a Ctrl-C it had caught but not yet
  // handed to a listener (while the command kept its turn, a sync wait) was dropped: the run exited 0.
  if (!process.listeners('SIGINT').includes(afterCommand)) process.on('SIGINT', afterCommand);
  return () => {
    running--;
    process.removeListener('SIGINT', handler);
  };
}
let running = 0;

/** A Ctrl-C once no command runs (the process finishing): it ends there, dying of the signal, as with no listener. */
function afterCommand(): void {
  if (running > 0) return;
  dieOfSigintAtExit();
  process.exit(EXIT.INTERRUPTED);
}

/**
 * The exit code of a command that ended on its own although a signal stopped it (Ctrl-C once its answer
 * was in, while it kept it): that of the signal, so that a shell loop ends on it. undefined when none came.
 */
export function signalExitCode(stopped: AbortSignal): ExitCode | undefined {
  if (!stopped.aborted) return undefined;
  return (stopped.reason as { exitCode?: ExitCode }).exitCode ?? EXIT.INTERRUPTED;
}

/**
 * Ctrl-C's end of a run: a process that exits 130 because it got SIGINT dies of SIGINT once its exit
 * listeners ran (temp files removed, tools stopped), as the shell's convention has it. bash reads an
 * exit(130) as a command that handled Ctrl-C itself and goes on: `for f in *.txt; do router chat …; done`
 * ran its next call, and `xargs` the rest. `$?` is 130 either way.
 */
export function dieOfSigintAtExit(): void {
  if (sigintAtExit) return;
  sigintAtExit = true;
  const onExit = (code: number) => {
    if (code !== EXIT.INTERRUPTED) return;
    // The listeners after this one run first: the signal ends the process where it is.
    const all = process.rawListeners('exit');
    for (const later of all.slice(all.indexOf(onExit) + 1)) {
      try {
        (later as (code: number) => void).call(process, code);
      } catch {
        // One that fails leaves the others to run, as node's own exit does.
      }
    }
    // With no listener node's handler goes too: the default action, the end of the process.
    process.removeAllListeners('SIGINT');
    process.kill(process.pid, 'SIGINT');
  };
  process.on('exit', onExit);
}
let sigintAtExit = false;

/** The stop of a SIGTERM: an interrupt whose exit code is 143. */
export function terminated(): Error {
  return Object.assign(new Error('terminated'), { name: 'AbortError', exitCode: EXIT.TERMINATED });
}
