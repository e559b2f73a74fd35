/** The one exit-code table of `router` (also in docs/reliability.md). */
export const EXIT = {
  OK: 0,
  /** Anything not listed below (also `-x` of an answer cut inside its code block). */
  FAILURE: 1,
  /** Bad flags, arguments or input files; the server's 400/413/422. Nothing was sent, or the server refused it. */
  USAGE: 2,
  /** No key, or the server's 401/403. */
  AUTH: 3,
  /** 402: not enough credits (for `batch get`: finalized cost exceeds the balance). */
  PAYMENT: 4,
  /** 404 or 410 (batch results deleted after the 30-day retention). */
  NOT_FOUND: 5,
  /** 429 after the retries ran out. */
  RATE_LIMITED: 6,
  /** 5xx from the server or provider after the retries ran out, or a broken answer. */
  SERVER: 7,
  /** Connection failed or timed out (`serve --check-drift`: a provider down, no drift found). */
  NETWORK: 8,
  /** A watched batch ended failed, expired or cancelled, or completed with every request failed. */
  BATCH_FAILED: 9,
  /** The answer does not follow --schema (not JSON, or not valid against it). */
  SCHEMA_MISMATCH: 10,
  /** The model asked for tool calls that were not run (a tool without a command, --max-tool-rounds reached, chat without --tools, a Responses function call). */
  TOOL_CALLS: 11,
  /** A source of tools failed: an MCP server did not start, ended during a call or did not answer in time. */
  TOOL_SOURCE: 12,
  /** The terminal closed (SIGHUP): `router serve` after its clean close. */
  HANGUP: 129,
  /** Ctrl-C. */
  INTERRUPTED: 130,
  /** SIGTERM (`kill`, `timeout`): any command but `router serve`, whose stop request it is. */
  TERMINATED: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.AUTH;
  if (status === 402) return EXIT.PAYMENT;
  if (status === 404 || status === 410) return EXIT.NOT_FOUND;
  if (status === 429) return EXIT.RATE_LIMITED;
  if (status >= 500) return EXIT.SERVER;
  if (status >= 400) return EXIT.USAGE;
  return EXIT.FAILURE;
}

/** An error the CLI reports as one line with a chosen exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.USAGE,
    /** Extra lines shown only with --verbose. */
    readonly detail?: string,
    /** Several `error:` lines, each said on its own (the message joins them). */
    readonly lines?: string[],
  ) {
    super(message);
  }
}

export const usage = (message: string) => new CliError(message, EXIT.USAGE);
