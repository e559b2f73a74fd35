import { Option, type Command } from '../../commander.js';
import { usage } from '../../exit-codes.js';
import { BATCH_ENDPOINTS, BATCH_MAX_BYTES, BATCH_MAX_REQUESTS, LISTABLE_BATCH_STATUSES } from '../../../client/facts.js';
import { action } from '../../run.js';
import { bytesIn, commaList, integerIn, modelId, secondsIn } from '../../options.js';
import type { CreateOpts } from './create.js';
import type { ListOpts } from './list.js';
import type { GetOpts } from './get.js';
import type { RunJobOpts } from './job/run.js';
import { collectStatus } from './list.js';
import { usdAmount } from '../../budget.js';

/** Flags of every command that follows a batch (create --watch, get --watch). */
function addWatchFlags(cmd: Command): Command {
  return cmd
    .option('--interval <duration>', 'first polling interval of --watch, seconds or 500ms, 5s (grows with backoff)', secondsIn(0.05, 3600), 1)
    .option('--offline-timeout <duration>', 'with --watch: keep polling through network errors, 429 and 5xx for this long (seconds, or 15m, 2h; default 15m)', secondsIn(1, 7 * 86_400), 900);
}

/** Where the requests of a file go (batch create, batch run). */
function addTargetFlags(cmd: Command): Command {
  return cmd
    .addOption(new Option('--endpoint <path>', 'target endpoint (default: the lines\' url, else /v1/chat/completions)').choices(BATCH_ENDPOINTS))
    .option('-m, --model <id>', 'batch model (default: the model the bodies agree on, else the profile\'s)', modelId)
    .option('--provider-only <slugs>', 'only these providers, comma-separated', commaList)
    .option('--no-fallbacks', 'do not fall back to other providers')
    // chat's --schema has no batch form: the bodies go as they are.
    .addOption(new Option('--schema <json|file>').hideHelp().argParser(() => {
      throw usage('--schema is not taken by batches: they send each line\'s body as it is; put "response_format" (chat) or "text.format" (responses) in each body');
    }));
}

export function registerBatch(program: Command): void {
  const batch = program
    .command('batch')
    .description('Asynchronous batches of requests against one endpoint: create from JSONL, list, get, watch; run files of any size as jobs.')
    .addHelpText('after', '\nPiped (not a terminal), list, get and get --watch print one tab-separated line per batch:\nid, status, endpoint, model, completed/failed/total, created. --json prints JSON.');
  registerCreate(batch);
  registerList(batch);
  registerGet(batch);
  registerRun(batch);
  registerJobs(batch);
}

function registerRun(batch: Command): void {
  addTargetFlags(
    batch
      .command('run')
      .description('run a JSONL file of any size as a job: split into batches, submit each once, follow, merge results in input order')
      .argument('[file]', 'JSONL file, as for batch create'),
  )
    .option('--max-requests <n>', `requests per batch (default ${BATCH_MAX_REQUESTS})`, integerIn(1, BATCH_MAX_REQUESTS))
    .option('--max-bytes <size>', 'request body bytes per batch: 52428800, 50M, 512K (default 200000000, the service\'s 200 MB)', bytesIn(1024, BATCH_MAX_BYTES))
    .option('--dry-run', 'check every line, print the shards and the cost bound of the file; send nothing')
    .option('--max-cost <usd>', 'refuse (exit 4) before submitting anything when the job could cost more (finished shards at their real cost)', (v: string) => usdAmount(v, '--max-cost'))
    .option('--ignore-budget', 'do not hold this batch to daily_budget / monthly_budget')
    .option('--resume <job>', 'take up a job again (re-running the same command on the same file does too)')
    .option('--new', 'start another job even if one was made from this file with the same settings')
    .option('--retry-failed', 'with --resume: submit again only the requests that failed or never ran')
    .option('-w, --watch', 'follow the job until every batch ends (exit 9 if one fails or expires)')
    .option('--results [file]', 'wait, then write every result in input order as JSONL (stdout when no file)')
    .option('--line-numbers', 'with --results: add "line" (the input line number) to each result')
    .option('--join', 'with --results: write {"line", "request", "result"} for each input line')
    .option('--interval <duration>', 'first polling interval, seconds or 500ms, 5s (grows while nothing changes)', secondsIn(0.05, 3600), 2)
    .option('--json', 'print the job record with its totals')
    .addHelpText(
      'after',
      `
A job lives in $XDG_STATE_HOME/router/jobs/<id> (job.json, written atomically before each create
and after each answer). Batches are created one at a time and run on the service in parallel.
A run that is interrupted (Ctrl-C, kill, network down) is taken up with --resume JOB or by running
the same command again (on the file under any name, or a copy): a create whose answer was lost is
found in the batch listing and proven its own by its results (each create's custom_ids carry a tag
of its own, taken off at merge), never sent twice. Requests that failed are counted on stderr.

Examples:
  $ router batch run requests.jsonl --model local/echo --dry-run
  $ router batch run requests.jsonl --model local/echo --watch --results results.jsonl
  $ router batch jobs`,
    )
    .action(action<RunJobOpts, [string | undefined]>(async (ctx, file) => (await import('./job/run.js')).runJob(ctx, file)));
}

function registerJobs(batch: Command): void {
  batch
    .command('jobs')
    .description('list the jobs of batch run on this machine, newest first')
    .option('--json', 'print the job records with their totals')
    .addHelpText('after', '\nPiped, one tab-separated line per job: id, state, shards ended/total, completed/failed/requests, cost, created, input.\n\nExamples:\n  $ router batch jobs\n  $ router batch jobs --json')
    .action(action<{ json?: boolean }>(async (ctx) => (await import('./job/show.js')).runJobs(ctx)));
  batch
    .command('job')
    .description('show one job of batch run: its shards, their batches, counts and cost')
    .argument('<id>', 'job id (router batch jobs lists them)')
    .option('--json', 'print the job record with its totals')
    .addHelpText('after', '\nOn a terminal, a table of shards; piped, one tab-separated line per shard: shard, lines, requests,\nbytes, batch, status, completed/failed/total, cost.\n\nExamples:\n  $ job=$(router batch run requests.jsonl --model local/echo)\n  $ router batch job "$job"\n  $ router batch job "$job" --json')
    .action(action<{ json?: boolean }, [string]>(async (ctx, id) => (await import('./job/show.js')).runJobShow(ctx, id)));
}

function registerCreate(batch: Command): void {
  addWatchFlags(
    addTargetFlags(
      batch
        .command('create')
        .description('create a batch from a JSONL file: one {"custom_id", "body"} (or {"custom_id", "method", "url", "body"}) per line')
        .argument('<file>', 'JSONL file, or - for stdin'),
    )
      .addOption(new Option('--completion-window <w>', 'completion window').choices(['24h']).default('24h'))
      .option('-w, --watch', 'follow the batch until it ends (exit 9 if it fails or expires)')
      .option('--results [file]', 'with --watch: write the results as JSONL (stdout when no file)')
      .option('--json', 'print the batch object')
      .option('-y, --yes', 'do not ask for confirmation of a large file')
      .option('--dry-run', 'check every line and print the cost bound of the file at the batch price; send nothing')
      .option('--max-cost <usd>', 'refuse (exit 4) when the batch could cost more, at the batch price', (v: string) => usdAmount(v, '--max-cost'))
      .option('--ignore-budget', 'do not hold this batch to daily_budget / monthly_budget'),
  )
    .addHelpText(
      'after',
      `
Limits: at most ${BATCH_MAX_REQUESTS} requests and 200 MB (200,000,000 bytes) of request body. Every line is checked
before anything is sent. The new batch id is always printed (on stderr with --watch).

Examples:
  $ router batch create requests.jsonl --model local/echo
  $ router batch create requests.jsonl --model local/echo --watch --results results.jsonl
  $ router batch create requests.jsonl --model local/echo --dry-run
  $ cat requests.jsonl | router batch create - --endpoint /v1/chat/completions --model local/echo --json`,
    )
    .action(action<CreateOpts, [string]>(async (ctx, file) => (await import('./create.js')).runCreate(ctx, file)));
}

function registerList(batch: Command): void {
  batch
    .command('list')
    .description('list the batches of your workspace, newest first')
    .option('--limit <n>', 'page size, 1 to 100 (default 20)', integerIn(1, 100))
    .option('--after <id>', 'start after this batch id (the last_id of the previous page)')
    .option('--status <status>', `filter, repeatable or comma-separated: ${LISTABLE_BATCH_STATUSES.join(', ')}`, collectStatus)
    .option('--created-after <when>', 'only batches created after (Unix seconds or a date)')
    .option('--created-before <when>', 'only batches created before (Unix seconds or a date)')
    .option('--all', 'follow every page')
    .option('--json', 'print the page (with --all: every batch in one list)')
    .option('--jsonl', 'print one batch per line')
    .addHelpText('after', '\nExamples:\n  $ router batch list --status in_progress --status validating\n  $ router batch list --all --created-after 2026-11-01 --jsonl')
    .action(action<ListOpts>(async (ctx) => (await import('./list.js')).runList(ctx)));
}

function registerGet(batch: Command): void {
  addWatchFlags(
    batch
      .command('get')
      .description('show a batch; --results writes its results as JSONL; --watch follows it until it ends')
      .argument('<id>', 'batch id')
      .option('-w, --watch', 'poll with backoff until the batch ends (exit 9 if it fails or expires)')
      .option('--results [file]', 'write the results as JSONL to FILE (atomically) or stdout')
      .option('--exit-status', 'exit 9 when the batch ended failed, expired or cancelled')
      .option('--json', 'print the batch object as the service sends it (results included)'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ id=$(router batch create requests.jsonl --model local/echo)
  $ router batch get "$id" --watch
  $ router batch get "$id" --results out.jsonl
  $ router batch get "$id" --json --exit-status`,
    )
    .action(action<GetOpts, [string]>(async (ctx, id) => (await import('./get.js')).runGet(ctx, id)));
}
