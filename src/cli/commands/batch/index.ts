/** `router batch create|list|get|run|jobs|job`: the definitions; each command's work is loaded when it runs. */
import { BATCH_MAX_REQUESTS } from '../../../client/facts.js';
import { defineCommand, defineGroup } from '../../define.js';
import { CREATE_FLAGS, GET_FLAGS, JOB_FLAGS, JOBS_FLAGS, LIST_FLAGS, RUN_FLAGS } from './flags.js';

/** The top-level fields of the JSON printed (for lists: of each item), for `--json FIELDS`. */
const BATCH = ['id', 'object', 'endpoint', 'model', 'completion_window', 'created_at', 'finalized_at', 'status', 'request_counts', 'error', 'results', 'usage'];
const JOB = ['id', 'created_at', 'updated_at', 'input', 'endpoint', 'model', 'provider', 'plain', 'max_requests', 'max_bytes', 'wrapper_bytes', 'requests', 'shards', 'totals', 'cost_bound'];

const create = defineCommand({
  name: 'create',
  jsonFields: BATCH,
  summary: 'create a batch from a JSONL file of requests',
  description: 'create a batch from a JSONL file: one {"custom_id", "body"} (or {"custom_id", "method", "url", "body"}) per line',
  args: [{ name: '<file>', help: 'JSONL file, or - for stdin', complete: 'files', stdin: true }],
  flags: CREATE_FLAGS,
  notes: `Limits: at most ${BATCH_MAX_REQUESTS} requests and 200 MB (200,000,000 bytes) of request body. Every line is checked before anything is sent. The new batch id is always printed (on stderr with --watch). With --watch and no --results, the batch once it ends: piped, one tab-separated line as batch list prints it.`,
  examples: [
    'router batch create requests.jsonl --model local/echo',
    'router batch create requests.jsonl --model local/echo \\\n--watch --results results.jsonl',
    'router batch create requests.jsonl --model local/echo --dry-run',
    'cat requests.jsonl | router batch create - --json \\\n--endpoint /v1/chat/completions --model local/echo',
  ],
  run: async (ctx, file) => (await import('./create.js')).runCreate(ctx, file),
});

const list = defineCommand({
  name: 'list',
  jsonFields: BATCH,
  summary: 'list the batches of your workspace, newest first',
  flags: LIST_FLAGS,
  notes: `Piped, one tab-separated line per batch: id, status, endpoint, model, completed/failed/total, created (ISO 8601).
A service with no listing (the deployed one) gets the batches made from this machine, each as last seen.`,
  examples: ['router batch list --status in_progress --status validating', 'router batch list --all --created-after 2026-11-01 --jsonl'],
  run: async (ctx) => (await import('./list.js')).runList(ctx),
});

const get = defineCommand({
  name: 'get',
  jsonFields: BATCH,
  summary: 'show a batch; --watch follows it to its end',
  description: 'show a batch; --results writes its results as JSONL; --watch follows it until it ends',
  args: [{ name: '<id>', help: 'batch id', complete: 'batch-ids' }],
  flags: GET_FLAGS,
  notes: 'On a terminal, a description; piped, one tab-separated line: id, status, endpoint, model, completed/failed/total, created (ISO 8601), as batch list prints it.',
  examples: ['id=$(router batch create requests.jsonl --model local/echo)', 'router batch get "$id" --watch', 'router batch get "$id" --results out.jsonl', 'router batch get "$id" --json --exit-status'],
  run: async (ctx, id) => (await import('./get.js')).runGet(ctx, id),
});

const run = defineCommand({
  name: 'run',
  jsonFields: JOB,
  summary: 'run a JSONL file of any size as a job',
  description: 'run a JSONL file of any size as a job: split into batches, submit each once, follow, merge results in input order',
  args: [{ name: '[file]', help: 'JSONL file, as for batch create', complete: 'files' }],
  flags: RUN_FLAGS,
  notes: `A job lives in $XDG_STATE_HOME/router/jobs/<id> (job.json, written atomically before each create and after each answer). Batches are created one at a time and run on the service in parallel.
A run that is interrupted (Ctrl-C, kill, network down) is taken up with --resume JOB or by running the same command again (on the file under any name, or a copy; at the same API root): a create whose answer was lost is found in the batch listing and proven its own by its results (each create's custom_ids carry a tag of its own, taken off at merge), never sent twice. Requests that failed are counted on stderr.
On stdout: the job's id; with --watch or --results, only the results of --results with no file (the id is then on stderr). --dry-run prints the plan as batch job does (piped, one tab-separated line per shard: shard, lines, requests, bytes, batch, status, completed/failed/total, cost); the cost bound is on stderr (cost_bound with --json).`,
  examples: ['router batch run requests.jsonl --model local/echo --dry-run', 'router batch run requests.jsonl --model local/echo \\\n--watch --results results.jsonl', 'router batch jobs'],
  run: async (ctx, file) => (await import('./run.js')).runJobCommand(ctx, file),
});

const jobs = defineCommand({
  name: 'jobs',
  jsonFields: JOB,
  summary: 'list the jobs of batch run on this machine, newest first',
  flags: JOBS_FLAGS,
  notes: 'On a terminal, a table; piped, one tab-separated line per job: id, state, shards ended/total, completed/failed/requests, cost, created, input.',
  examples: ['router batch jobs', 'router batch jobs --json'],
  run: async (ctx) => (await import('./jobs.js')).runJobs(ctx),
});

const job = defineCommand({
  name: 'job',
  jsonFields: JOB,
  summary: 'show one job of batch run: shards, counts, cost',
  description: 'show one job of batch run: its shards, their batches, counts and cost',
  args: [{ name: '<id>', help: 'job id (router batch jobs lists them)', complete: 'job-ids' }],
  flags: JOB_FLAGS,
  notes: 'On a terminal, a table of shards; piped, one tab-separated line per shard: shard, lines, requests, bytes, batch, status, completed/failed/total, cost.',
  examples: ['job=$(router batch run requests.jsonl --model local/echo)', 'router batch job "$job"', 'router batch job "$job" --json'],
  run: async (ctx, id) => (await import('./jobs.js')).runJobShow(ctx, id),
});

export const batch = defineGroup({
  name: 'batch',
  logsUsage: true,
  summary: 'create, list and follow asynchronous batches',
  description: 'Asynchronous batches of requests against one endpoint: create from JSONL, list, get, watch; run files of any size as jobs.',
  commands: [create, list, get, run, jobs, job],
  examples: ['router batch create requests.jsonl --model local/echo \\\n--watch --results results.jsonl', 'router batch list --json id,status', 'router batch run requests.jsonl --model local/echo --dry-run'],
  notes: 'Piped (not a terminal), list, get and get --watch print one tab-separated line per batch: id, status, endpoint, model, completed/failed/total, created. --json prints JSON.',
});
