/** Follows a job: one list call per poll (pages only as far as the job's batches go), and its summary. */
import type { RouterClient } from '../../client/index.js';
import type { Batch } from '../../client/types.js';
import { isFinished, type JobRecord } from './store.js';
import { track } from './submit.js';
import { isNoListing } from '../../client/resources/batches.js';
import { batchError, batchOf402 } from '../results.js';
import { costText, roundCost } from '../../internal/round-cost.js';
import { grouped } from '../../internal/counted.js';

/** Updates every unfinished shard from the listing; returns whether anything changed. */
export async function refreshJob(client: RouterClient, job: JobRecord, signal: AbortSignal): Promise<boolean> {
  const wanted = new Map(job.shards.filter((s) => s.batch_id && !isFinished(s)).map((s) => [s.batch_id!, s]));
  if (wanted.size === 0) return false;
  let changed = false;
  const update = (b: Batch) => {
    const s = wanted.get(b.id);
    if (!s) return;
    wanted.delete(b.id);
    const before = JSON.stringify([s.status, s.request_counts, s.usage]);
    track(s, b);
    if (JSON.stringify([s.status, s.request_counts, s.usage]) !== before) changed = true;
  };
  // The listing from the oldest of these batches on, by the service's own clock.
  const oldest = Math.min(...[...wanted.values()].map((s) => s.created_at ?? 0));
  try {
    if (client.batches.hasListing !== false) {
      for await (const page of client.batches.listAll({ ...(oldest > 0 ? { created_after: oldest - 1 } : {}), limit: 100 }, { signal })) {
        page.data.forEach(update);
        if (wanted.size === 0) break;
      }
    }
  } catch (err) {
    if (!isNoListing(err)) throw err;
  }
  // Not in the listing (a service without one; a record of an older version, which kept no created_at): asked one by one.
  // A 402 (its cost exceeds the balance) carries the batch as it ended: the caller records what it owes (the CLI's logOwed()).
  for (const id of [...wanted.keys()]) update(await client.batches.getStreaming(id, () => {}, { signal }).catch((err: unknown) => Promise.reject(batchOf402(err) ? batchError(err, id) : err)));
  return changed;
}

export interface JobTotals {
  shards: number;
  finished: number;
  requests: number;
  completed: number;
  failed: number;
  cost: number;
  tokens: number;
  /** Shards whose batch ended failed, expired or cancelled. */
  unsuccessful: number;
}

export function totals(job: JobRecord): JobTotals {
  const t: JobTotals = { shards: job.shards.length, finished: 0, requests: job.requests, completed: 0, failed: 0, cost: 0, tokens: 0, unsuccessful: 0 };
  for (const s of job.shards) {
    if (isFinished(s)) t.finished++;
    // A batch that did not complete counts until a later retry of the same shard takes it over.
    const family = s.parent ?? s.index;
    const retriedLater = job.shards.some((r) => r.index > s.index && r.parent === family);
    if (isFinished(s) && s.status !== 'completed' && !retriedLater) t.unsuccessful++;
    t.completed += s.request_counts?.completed ?? 0;
    t.failed += s.request_counts?.failed ?? 0;
    t.cost += s.usage?.cost ?? 0;
    t.tokens += s.usage?.total_tokens ?? 0;
  }
  for (const s of job.shards) t.failed -= s.failed_before ?? 0;
  t.cost = roundCost(t.cost);
  return t;
}

/** A job as JSON: the record plus its totals. */
export function jobSummary(job: JobRecord): Record<string, unknown> {
  const t = totals(job);
  return { ...job, totals: { shards: t.shards, finished: t.finished, requests: t.requests, completed: t.completed, failed: t.failed, total_tokens: t.tokens, cost: t.cost } };
}

const clock = (seconds: number) => (seconds >= 3600 ? `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m` : seconds >= 60 ? `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s` : `${Math.round(seconds)}s`);

export function progressLine(job: JobRecord, startedMs: number, firstDone: number): string {
  const t = totals(job);
  const elapsed = (Date.now() - startedMs) / 1000;
  const done = t.completed + t.failed;
  const rate = (done - firstDone) / Math.max(elapsed, 0.001);
  const eta = rate > 0 && done < t.requests ? ` · ETA ${clock((t.requests - done) / rate)}` : '';
  return `${job.id}: shards ${t.finished}/${t.shards} · requests ${grouped(t.completed)} completed, ${grouped(t.failed)} failed of ${grouped(t.requests)} · $${costText(t.cost)} · ${clock(elapsed)}${eta}`;
}
