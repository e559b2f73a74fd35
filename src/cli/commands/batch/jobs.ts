/** `router batch jobs` and `router batch job ID`: what the local job records hold. */
import { join } from 'node:path';
import type { FlagValues } from '../../flags/flags.js';
import type { RunContext } from '../../run.js';
import type { JOB_FLAGS, JOBS_FLAGS } from './flags.js';
import type { IO } from '../../io/io.js';
import { jobSummary, totals } from '../../../batch/job/progress.js';
import { jobsDir, listJobs, loadJob, type JobRecord } from '../../../batch/job/store.js';
import { visible } from '../../../internal/visible.js';
import { counted, grouped } from '../../../internal/counted.js';
import { described, tabLine } from '../../io/described.js';
import { leftOutDamaged } from '../../io/damaged-note.js';

function stateOf(job: JobRecord): string {
  const t = totals(job);
  if (job.shards.some((s) => !s.batch_id)) return 'submitting';
  if (t.finished < t.shards) return 'running';
  return t.unsuccessful ? 'ended with problems' : 'completed';
}

/** A job's shards: a table under the job's record on a terminal; piped, one tab-separated line per shard. */
export async function describeJob(job: JobRecord, io: IO): Promise<string> {
  const t = totals(job);
  // What a shard has not yet: "-" on a terminal, empty piped (as in every tab-separated listing).
  const none = io.stdoutTTY ? '-' : '';
  const rows = job.shards.map((s) => [
    String(s.index + 1) + (s.parent !== undefined ? ` (retry of ${s.parent + 1})` : ''),
    s.lines ? `${s.count} of ${s.first_line}-${s.last_line}` : `${s.first_line}-${s.last_line}`,
    String(s.count),
    String(s.bytes),
    s.batch_id ?? (s.submitting || s.submitting_since !== undefined ? '(submitting)' : none),
    s.status ?? none,
    s.request_counts ? `${s.request_counts.completed}/${s.request_counts.failed}/${s.request_counts.total}` : none,
    s.usage?.cost !== undefined ? s.usage.cost.toFixed(6) : none,
  ]);
  if (!io.stdoutTTY) return rows.map((r) => tabLine(r)).join('');
  const { table } = await import('../../io/table.js');
  // The job described as every record is (each value cut to the terminal), then its shards.
  const head = described(io, [
    ['id', job.id],
    ['state', stateOf(job)],
    ['input', job.input.path],
    ['requests', `${counted(job.requests, 'request')} to ${job.endpoint} with ${job.model}`],
    ['done', `${grouped(t.completed)} completed, ${grouped(t.failed)} failed`],
    ['cost', `${counted(t.tokens, 'token')}, $${t.cost.toFixed(6)}`],
  ]);
  return `${head}\n${table(io, ['shard', 'lines', 'requests', 'bytes', 'batch', 'status', 'done/failed/total', 'cost'], rows)}`;
}

export async function runJobs(ctx: RunContext<FlagValues<typeof JOBS_FLAGS>>): Promise<void> {
  const jobs = listJobs(ctx.env, (id) => leftOutDamaged(ctx.io, join(jobsDir(ctx.env), id, 'job.json')));
  if (ctx.opts.json) return ctx.io.json(jobs.map(jobSummary));
  const rows = jobs.map((j) => {
    const t = totals(j);
    return [j.id, stateOf(j), `${t.finished}/${t.shards}`, `${t.completed}/${t.failed}/${t.requests}`, t.cost.toFixed(6), new Date(j.created_at * 1000).toISOString(), visible(j.input.path)];
  });
  if (!rows.length) return ctx.io.info('no jobs yet: router batch run FILE.jsonl starts one');
  // Piped, tab-separated lines (table() drops the header there); on a terminal a table, as batch job ID prints its shards.
  const { table } = await import('../../io/table.js');
  ctx.io.out(table(ctx.io, ['id', 'state', 'shards ended', 'completed/failed/requests', 'cost', 'created', 'input'], rows, { fit: 6 }));
}

export async function runJobShow(ctx: RunContext<FlagValues<typeof JOB_FLAGS>>, id: string): Promise<void> {
  const job = loadJob(ctx.env, id);
  if (ctx.opts.json) ctx.io.json(jobSummary(job));
  else ctx.io.out(await describeJob(job, ctx.io));
}
