/** The flags every command takes (`router --profile work chat …`), one table like each command's own. */
import type { FlagTable } from './flags.js';
import { integerIn, secondsIn } from './options.js';
import { profileArg } from './setup-flags.js';

export const GLOBAL_FLAGS = {
  profile: { flags: '-p, --profile <name>', help: 'config profile to use (env ROUTER_PROFILE)', complete: 'profiles', parse: profileArg },
  apiRoot: { flags: '--api-root <url>', help: 'API root, e.g. http://127.0.0.1:8080/api (env ROUTER_API_ROOT)' },
  timeout: {
    flags: '--timeout <duration>',
    help: 'longest wait, per attempt, for a connection, an answer or a stream\'s next event (keep-alive comments do not count): 500ms, 30s, 2m, at least 100ms (default 120s; a fragment URL\'s whole fetch: 30s)',
    parse: secondsIn(0.1, 86_400),
  },
  maxRetries: { flags: '--max-retries <n>', help: 'retries of transient failures, 0 to 10 (default 2)', parse: integerIn(0, 10) },
  color: { flags: '--no-color', help: 'no colors (also NO_COLOR=1)' },
  quiet: { flags: '-q, --quiet', help: 'no progress or status lines on stderr' },
  verbose: { flags: '--verbose', help: 'more detail on errors: status, request id, error type' },
  input: { flags: '--no-input', help: 'never prompt; fail instead, naming the flag to pass (also ROUTER_NO_INPUT=1)' },
  /** false with --no-stdin: stdin is never read (a `while read` loop's list stays with the loop). */
  stdin: { flags: '--no-stdin', help: 'never read stdin: the prompt is the arguments alone, as in a while-read loop (also ROUTER_NO_STDIN=1)' },
  /** false with --no-log: nothing goes to the usage ledger. */
  log: { flags: '--no-log', help: 'do not write this call to the local usage ledger (also ROUTER_NO_LOG=1, or: router config set log off)' },
} as const satisfies FlagTable;
