import { APIError, ConnectionError, ProtocolError, StreamError, ValidationError } from '../client/errors.js';
import { DamagedFileError, SettingsError } from '../config/fields.js';
import { BatchError, type BatchErrorReason } from '../batch/errors.js';
import { cliErrorOf } from './kit-words.js';
import { CliError, EXIT, exitCodeForStatus, type ExitCode } from './exit-codes.js';
import type { IO } from './io/io.js';
import { batchLines } from './batch-words.js';
import { describeSystemError, isPathProblem, isSystemError } from '../internal/system-errors.js';
import { keptFileWhy, namedFileLine } from '../internal/named-input.js';
import { withInstalledDocs } from './io/installed-docs.js';
import { exitSoFar } from './io/exit-so-far.js';
import { knownKeys } from '../config/known-keys.js';
import { failedAttempts } from './answers/routing-note.js';

const isAbort = (err: unknown) => (err as { name?: string })?.name === 'AbortError' || (err as { code?: string })?.code === 'ABORT_ERR';

/** The emulator's 404 for a route of the service it does not have: where its page (installed with router) says what it serves. */
export function unservedRouteHint(status: number, message: string): string {
  return status === 404 && /router serve does not serve it$/.test(message) ? ` (what it serves: ${withInstalledDocs('docs/emulator.md')})` : '';
}

/** What to do about a refusal that says it, from its status and the service's message (`router api`'s failures too). */
export function statusHint(status: number, message: string): string {
  const unserved = unservedRouteHint(status, message);
  if (unserved) return unserved;
  if (status === 403 && /management key/i.test(message)) {
    return ' (set one: export ROUTER_MANAGEMENT_KEY=…, or printf %s "$KEY" | router config set management_key; router serve prints one)';
  }
  return '';
}

function apiHint(err: APIError): string {
  const hint = (err as { hint?: unknown }).hint;
  if (typeof hint === 'string') return hint;
  if (err.status === 401) return ' (check the API key: router config get api_key, or ROUTER_API_KEY)';
  return statusHint(err.status, err.message);
}

const BATCH_EXIT: Record<BatchErrorReason, ExitCode> = {
  invalid: EXIT.USAGE,
  not_found: EXIT.NOT_FOUND,
  payment: EXIT.PAYMENT,
  busy: EXIT.FAILURE,
  damaged: EXIT.FAILURE,
  not_ended: EXIT.FAILURE,
  network: EXIT.NETWORK,
};

/**
 * The one place where a failure becomes words and an exit code: one `error:` line
 * (`--verbose` adds the details), the code from the table in docs/reliability.md.
 */
export function reportError(err: unknown, io: IO): ExitCode {
  // A failure met before the keys were read (a flag's value quoting what was typed) hides them too.
  const known = knownKeys(io.env);
  for (const key of known.keys) io.addSecret(key);
  io.marked.add(known.marks);
  const code = describeError(err, io);
  // What exists already (a batch just created) is named after any failure that follows, so that its
  // id is never lost; a failure of stdout names it on its own line (below), and Ctrl-C says how to go on.
  if (code !== EXIT.OK && code !== EXIT.INTERRUPTED && code !== EXIT.TERMINATED && !(isSystemError(err) && err.path === 'stdout')) for (const made of io.madeSoFar) io.note(made);
  return code;
}

function describeError(err: unknown, io: IO): ExitCode {
  err = cliErrorOf(err) ?? err;
  if (err instanceof CliError) {
    for (const line of err.lines ?? [err.message]) io.error(line);
    if (io.verbose && err.detail) io.note(err.detail);
    return err.exitCode;
  }
  if (err instanceof BatchError) {
    for (const line of batchLines(err)) io.error(line);
    return BATCH_EXIT[err.reason];
  }
  // Ctrl-C as a key inside a prompt (ExitPromptError) is the same Ctrl-C as a SIGINT.
  if (isAbort(err) && (err as { exitCode?: unknown }).exitCode === EXIT.TERMINATED) {
    io.error('terminated');
    return EXIT.TERMINATED;
  }
  if (isAbort(err) || (err as { name?: string })?.name === 'ExitPromptError') {
    io.error('interrupted');
    return EXIT.INTERRUPTED;
  }
  if (err instanceof APIError) {
    // A gateway's failure asked with --router-metadata: which providers were tried, and why each failed, one line each.
    const attempts = failedAttempts(err.body, err.message);
    io.error(`${attempts.message}${apiHint(err)}`);
    for (const line of attempts.lines) io.note(line);
    if (io.verbose) {
      const parts = [`status ${err.status}`];
      if (err.requestId) parts.push(`request id ${err.requestId}`);
      if (err.errorType) parts.push(`error_type ${err.errorType}`);
      if (err instanceof StreamError) parts.push('during the stream');
      io.note(`  ${parts.join(', ')}`);
    }
    return exitCodeForStatus(err.status);
  }
  if (err instanceof ConnectionError) {
    io.error(err.message);
    return EXIT.NETWORK;
  }
  if (err instanceof ProtocolError) {
    io.error(err.message);
    return EXIT.SERVER;
  }
  // A file router keeps that it cannot make sense of: exit 1, as every damaged store file (docs/reliability.md).
  if (err instanceof DamagedFileError) {
    io.error(err.message);
    return EXIT.FAILURE;
  }
  if (err instanceof ValidationError || err instanceof SettingsError) {
    io.error(err.message);
    return EXIT.USAGE;
  }
  if (isSystemError(err)) {
    if (err.code === 'EPIPE') return exitSoFar(io.stdout);
    const made = err.path === 'stdout' ? io.madeSoFar.join('; ') : '';
    io.error(err.keptAs && err.path ? namedFileLine(err.keptAs, err.path, keptFileWhy(err.code)) : `${describeSystemError(err)}${made ? `; ${made}` : ''}`);
    return isPathProblem(err.code) ? EXIT.USAGE : EXIT.FAILURE;
  }
  const message = (err as Error)?.message ?? String(err);
  // A slip of our own code, not of the input or the network: said as such.
  const bug = err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError;
  io.error(`${bug ? 'internal error: ' : ''}${message.split('\n')[0]?.trim() || 'unexpected failure'}${bug ? ' (a bug of router; --verbose shows where)' : ''}`);
  if (io.verbose && (err as Error)?.stack) io.note((err as Error).stack!);
  return EXIT.FAILURE;
}
