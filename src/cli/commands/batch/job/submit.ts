/**
 * Submits a job's shards, one create at a time, each exactly once: the record says "submitting"
 * before the create is sent and holds the batch id after. A create whose fate is unknown (the
 * answer was lost, or the CLI was killed) is reconciled with the listing before anything is sent again.
 */
import type { RouterClient } from '../../../../client/index.js';
import { APIError } from '../../../../client/errors.js';
import type { Batch } from '../../../../client/types.js';
import { sleep } from '../../../../internal/sleep.js';
import type { IO } from '../../../io.js';
import { findCreated } from '../find-created.js';
import { shardRequests } from './shard-io.js';
import { listJobs, saveJob, type JobRecord, type ShardRecord } from './store.js';

export interface SubmitContext {
  io: IO;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  client: RouterClient;
}

/** A 4xx is the service's refusal: nothing was created. Anything else may have created the batch. */
const definite = (err: unknown) => err instanceof APIError && err.status >= 400 && err.status < 500;

export function adopt(shard: ShardRecord, b: Pick<Batch, 'id' | 'status' | 'request_counts' | 'usage'>): void {
  shard.batch_id = b.id;
  delete shard.submitting_since;
  track(shard, b);
}

export function track(shard: ShardRecord, b: Pick<Batch, 'status' | 'request_counts' | 'usage'>): void {
  shard.status = b.status;
  shard.request_counts = { ...b.request_counts };
  const u = (b.usage ?? undefined) as ShardRecord['usage'];
  if (u) shard.usage = { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens, cost: u.cost };
}

/**
 * The batch a lost create made, if any: created after the create began, with the shard's endpoint,
 * model and request count, and not already any job's. Creates of one job never overlap, so the
 * oldest such batch is the shard's.
 */
async function reconcile(c: SubmitContext, job: JobRecord, shard: ShardRecord): Promise<Batch | undefined> {
  const claimed = new Set<string>();
  for (const s of [...listJobs(c.env).flatMap((j) => j.shards), ...job.shards]) if (s.batch_id) claimed.add(s.batch_id);
  const found = await findCreated(c.client, { since: shard.submitting_since!, endpoint: job.endpoint, model: job.model, count: shard.count, skip: claimed }, c.signal);
  return found.at(-1);
}

async function submitOne(c: SubmitContext, job: JobRecord, shard: ShardRecord): Promise<void> {
  const head = { endpoint: job.endpoint, model: job.model, completion_window: '24h' as const, ...(job.provider ? { provider: job.provider } : {}) };
  for (let attempt = 1; ; attempt++) {
    if (shard.submitting_since !== undefined) {
      const found = await reconcile(c, job, shard);
      if (found) {
        adopt(shard, found);
        saveJob(c.env, job);
        c.io.info(`shard ${shard.index + 1}: found its batch ${found.id} (the answer to its create was lost)`);
        return;
      }
    }
    shard.submitting_since = Math.floor(Date.now() / 1000) - 1;
    saveJob(c.env, job);
    try {
      adopt(shard, await c.client.batches.createStreaming(head, shardRequests(job, shard), { signal: c.signal }));
      saveJob(c.env, job);
      return;
    } catch (err) {
      if (c.signal.aborted) throw err;
      if (definite(err)) {
        delete shard.submitting_since;
        saveJob(c.env, job);
        throw err;
      }
      if (attempt >= 4) throw err;
      c.io.info(`shard ${shard.index + 1}: ${(err as Error).message}; checking whether its batch was created`);
      await sleep(500 * 2 ** attempt, c.signal);
    }
  }
}

/** Submits every shard that has no batch yet, in order. */
export async function submitShards(c: SubmitContext, job: JobRecord, onSubmitted: (shard: ShardRecord) => void): Promise<void> {
  for (const shard of job.shards) {
    if (shard.batch_id) continue;
    await submitOne(c, job, shard);
    onSubmitted(shard);
  }
}
