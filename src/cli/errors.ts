import { CliError, EXIT, exitCodeForStatus, type ExitCode } from './exit-codes.js';
import type { IO } from './io.js';

interface Shaped {
  name?: string;
  message?: string;
  status?: number;
  requestId?: string;
  errorType?: string;
  maybeDelivered?: boolean;
}

/** Prints one `error: …` line for any failure and returns the exit code. `--verbose` adds the details. */
export function reportError(err: unknown, io: IO): ExitCode {
  const e = (err ?? {}) as Shaped;
  if (err instanceof CliError) {
    io.error(err.message);
    if (io.verbose && err.detail) io.note(err.detail);
    return err.exitCode;
  }
  if (e.name === 'AbortError' || (err as { code?: string })?.code === 'ABORT_ERR') {
    io.error('interrupted');
    return EXIT.INTERRUPTED;
  }
  if (e.name === 'ExitPromptError') {
    io.error('cancelled');
    return EXIT.INTERRUPTED;
  }
  if (typeof e.status === 'number' && (e.name === 'APIError' || e.name === 'StreamError')) {
    const code = exitCodeForStatus(e.status);
    const hint = e.status === 401 ? ' (check the API key: router config get api_key, or ROUTER_API_KEY)' : '';
    io.error(`${e.message}${hint}`);
    if (io.verbose) {
      const parts = [`status ${e.status}`];
      if (e.requestId) parts.push(`request id ${e.requestId}`);
      if (e.errorType) parts.push(`error_type ${e.errorType}`);
      io.note(`  ${parts.join(', ')}`);
    }
    return code;
  }
  if (e.name === 'TimeoutError' || e.name === 'ConnectionError') {
    io.error(e.message ?? 'connection failed');
    return EXIT.NETWORK;
  }
  if (e.name === 'ProtocolError') {
    io.error(e.message ?? 'the server sent an answer that could not be read');
    return EXIT.SERVER;
  }
  if (e.name === 'ValidationError') {
    io.error(e.message ?? 'invalid request');
    return EXIT.USAGE;
  }
  const code = (err as { code?: string })?.code;
  if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') {
    io.error(e.message ?? String(err));
    return EXIT.USAGE;
  }
  if (code === 'EPIPE') return EXIT.OK;
  io.error(e.message ?? String(err));
  if (io.verbose && (err as Error)?.stack) io.note((err as Error).stack!);
  return EXIT.FAILURE;
}
