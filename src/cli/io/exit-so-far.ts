import type { ExitCode } from '../exit-codes.js';

/** The exit code a command has already earned (a drift found), by its stdout: a reader gone (`| head`) ends it with that. */
const exitsSoFar = new WeakMap<object, ExitCode>();

/** Records the exit code the command will end with whatever comes next, as `| head` may end it before it says so. */
export function failsWith(stdout: object, code: ExitCode): void {
  exitsSoFar.set(stdout, code);
}

/** The exit code recorded with failsWith() for this stdout, 0 when none. */
export function exitSoFar(stdout: object): ExitCode {
  return exitsSoFar.get(stdout) ?? 0;
}
