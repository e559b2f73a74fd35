/** The flags of the batch commands: the groups they share (target, watch, spend), then each command's table. */
import { BATCH_ENDPOINTS, BATCH_MAX_BYTES, BATCH_MAX_REQUESTS, LISTABLE_BATCH_STATUSES, UNLISTABLE_BATCH_STATUSES } from '../../../client/facts.js';
import { InvalidArgumentError } from '../../commander.js';
import { usage } from '../../exit-codes.js';
import type { FlagTable, FlagValues } from '../../flags/flags.js';
import { bytesIn, integerIn, modelOrAlias, ROUTING_FLAGS, secondsIn } from '../../flags/options.js';
import { usdAmount } from '../../../kit/spend/budget.js';

/** `--results [file]`: the file, or true (stdout) when none is given. */
const fileOrStdout = (value: string): string | true => value;

/** Where the requests of a file go (batch create, batch run). */
export const TARGET_FLAGS = {
  endpoint: { flags: '--endpoint <path>', help: "target endpoint (default: the lines' url, else /v1/chat/completions)", choices: BATCH_ENDPOINTS },
  model: { flags: '-m, --model <id>', help: "batch model (default: the model the bodies agree on, else the profile's)", parse: modelOrAlias, complete: 'models' },
  providerOnly: ROUTING_FLAGS.providerOnly,
  fallbacks: ROUTING_FLAGS.fallbacks,
  // chat's --schema has no batch form: the bodies go as they are.
  schema: {
    flags: '--schema <json|file>',
    help: '',
    hidden: true,
    parse: (): never => {
      throw usage('--schema is not taken by batches: they send each line\'s body as it is; put "response_format" (chat) or "text.format" (responses) in each body');
    },
  },
} as const satisfies FlagTable;

/** How a watch polls (batch create --watch, batch get --watch; batch run follows with its own interval). */
export const WATCH_FLAGS = {
  interval: { flags: '--interval <duration>', help: 'with --watch: first polling interval, seconds or 500ms, 5s (grows with backoff)', parse: secondsIn(0.05, 3600), default: 1, goesWith: ['watch'] },
  offlineTimeout: { flags: '--offline-timeout <duration>', help: 'with --watch: keep polling through network errors, 429 and 5xx for this long (seconds, or 15m, 2h)', parse: secondsIn(1, 7 * 86_400), default: 900, defaultShown: '15m', goesWith: ['watch'] },
} as const satisfies FlagTable;

const maxCost = (help: string) => ({ flags: '--max-cost <usd>', help, parse: (v: string) => usdAmount(v, '--max-cost') }) as const;
const IGNORE_BUDGET = { flags: '--ignore-budget', help: 'do not hold this batch to daily_budget / monthly_budget' } as const;
const JOB_JSON = { flags: '--json', help: 'print the job record with its totals' } as const;

export const CREATE_FLAGS = {
  ...TARGET_FLAGS,
  completionWindow: { flags: '--completion-window <w>', help: 'completion window', choices: ['24h'], default: '24h' },
  watch: { flags: '-w, --watch', help: 'follow the batch until it ends (exit 9 if it fails, expires or none is answered)' },
  results: { flags: '--results [file]', help: 'with --watch: write the results as JSONL (stdout when no file); an existing file is replaced once they are whole', parse: fileOrStdout },
  json: { flags: '--json', help: 'print the batch object' },
  yes: { flags: '-y, --yes', help: 'do not ask for confirmation of a large file' },
  dryRun: { flags: '--dry-run', help: 'check every line and print the cost bound of the file at the batch price (stderr); send nothing' },
  new: { flags: '--new', help: 'send even if an earlier create of this file was never answered or its record is damaged (it may be billed twice)' },
  maxCost: maxCost('refuse (exit 4) when the batch could cost more, at the batch price'),
  ignoreBudget: IGNORE_BUDGET,
  ...WATCH_FLAGS,
} as const satisfies FlagTable;

export const GET_FLAGS = {
  watch: { flags: '-w, --watch', help: 'poll with backoff until the batch ends (exit 9 if it fails, expires or none is answered)' },
  results: { flags: '--results [file]', help: 'write the results as JSONL to FILE or stdout; an existing FILE is replaced once they are whole (kept on an error or Ctrl-C)', parse: fileOrStdout },
  exitStatus: { flags: '--exit-status', help: 'exit 9 when the batch ended failed, expired or cancelled, or every request failed' },
  json: { flags: '--json', help: 'print the batch object as the service sends it (results included)' },
  ...WATCH_FLAGS,
} as const satisfies FlagTable;

const LISTABLE: readonly string[] = LISTABLE_BATCH_STATUSES;

export function collectStatus(value: string, previous: string[] = []): string[] {
  for (const s of value.split(',')) {
    if ((UNLISTABLE_BATCH_STATUSES as readonly string[]).includes(s)) {
      throw new InvalidArgumentError(`"${s}" cannot be filtered on: the service collapses it into in_progress (use in_progress).`);
    }
    if (!LISTABLE.includes(s)) throw new InvalidArgumentError(`allowed: ${LISTABLE.join(', ')}.`);
  }
  return [...previous, ...value.split(',')];
}

export const LIST_FLAGS = {
  limit: { flags: '--limit <n>', help: 'page size, 1 to 100 (default 20)', parse: integerIn(1, 100) },
  after: { flags: '--after <id>', help: 'start after this batch id (the last_id of the previous page)' },
  status: { flags: '--status <status>', help: `filter, repeatable or comma-separated: ${LISTABLE_BATCH_STATUSES.join(', ')}`, parse: collectStatus, values: LISTABLE_BATCH_STATUSES },
  createdAfter: { flags: '--created-after <when>', help: 'only batches created after (Unix seconds or a date)' },
  createdBefore: { flags: '--created-before <when>', help: 'only batches created before (Unix seconds or a date)' },
  all: { flags: '--all', help: 'follow every page' },
  json: { flags: '--json', help: 'print the page (with --all: every batch in one list)' },
  jsonl: { flags: '--jsonl', help: 'print one batch per line' },
} as const satisfies FlagTable;

export const RUN_FLAGS = {
  ...TARGET_FLAGS,
  maxRequests: { flags: '--max-requests <n>', help: `requests per batch (default ${BATCH_MAX_REQUESTS})`, parse: integerIn(1, BATCH_MAX_REQUESTS) },
  maxBytes: { flags: '--max-bytes <size>', help: "request body bytes per batch: 52428800, 50M, 512K (default 200000000, the service's 200 MB)", parse: bytesIn(1024, BATCH_MAX_BYTES) },
  dryRun: { flags: '--dry-run', help: 'check every line, print the shards (stdout) and the cost bound of the file (stderr); send nothing' },
  maxCost: maxCost('refuse (exit 4) before submitting anything when the job could cost more (finished shards at their real cost)'),
  ignoreBudget: IGNORE_BUDGET,
  resume: { flags: '--resume <job>', help: 'take up a job again (re-running the same command on the same file does too)', complete: 'job-ids' },
  new: { flags: '--new', help: 'start another job even if one was made from this file with the same settings' },
  retryFailed: { flags: '--retry-failed', help: 'with --resume: submit again only the requests that failed or never ran', goesWith: ['resume'] },
  resubmitLost: { flags: '--resubmit-lost', help: "with --resume: send again a shard whose create's answer was lost where the service lists no batches (a batch it made is then billed too)", goesWith: ['resume'] },
  watch: { flags: '-w, --watch', help: 'follow the job until every batch ends (exit 9 if one fails or expires)' },
  results: { flags: '--results [file]', help: 'wait, then write every result in input order as JSONL (stdout when no file); an existing file is replaced once they are whole', parse: fileOrStdout },
  lineNumbers: { flags: '--line-numbers', help: 'with --results: add "line" (the input line number) to each result', goesWith: ['results'] },
  join: { flags: '--join', help: 'with --results: write {"line", "request", "result"} for each input line', goesWith: ['results'] },
  // A job's poll is one listing for all its batches: it starts slower than a watch of one batch.
  interval: { ...WATCH_FLAGS.interval, help: 'with --watch or --results: first polling interval, seconds or 500ms, 5s (grows while nothing changes)', default: 2, goesWith: ['watch', 'results'] },
  // Unlike a watch, a run stops at the first failure unless asked (the job is saved; re-running takes it up).
  offlineTimeout: { flags: WATCH_FLAGS.offlineTimeout.flags, parse: WATCH_FLAGS.offlineTimeout.parse, goesWith: ['watch', 'results'], help: 'with --watch or --results: keep following through network errors, 429 and 5xx for this long (seconds, or 15m, 2h; default: stop at the first, the job saved)' },
  json: JOB_JSON,
} as const satisfies FlagTable;

export const JOBS_FLAGS = { json: { flags: '--json', help: 'print the job records with their totals' } } as const satisfies FlagTable;
export const JOB_FLAGS = { json: JOB_JSON } as const satisfies FlagTable;

export type CreateOpts = FlagValues<typeof CREATE_FLAGS>;
export type GetOpts = FlagValues<typeof GET_FLAGS>;
export type ListOpts = FlagValues<typeof LIST_FLAGS>;
export type RunOpts = FlagValues<typeof RUN_FLAGS>;
